{{/*
Refuse to render a release that would start but could not work, or would lose paid work.
Each guard says why; included from deployment.yaml so it runs for every install and upgrade.
*/}}
{{- define "image-worker.validate" -}}

{{- /* The application default (localhost:9092) never exists inside a pod: the worker would wait forever, unready. */}}
{{- if not .Values.kafka.bootstrapServers }}
{{- fail "kafka.bootstrapServers is required: the Kafka brokers, e.g. my-cluster-kafka-bootstrap.kafka:9092" }}
{{- end }}

{{- /* Required by the worker: without them every pod crash-loops at start; better to say so at install. */}}
{{- if not .Values.gateway.baseUrl }}
{{- fail "gateway.baseUrl is required: the gateway origin, e.g. https://gateway.example.com" }}
{{- end }}
{{- if not .Values.gateway.model }}
{{- fail "gateway.model is required: the image model identifier sent as `model`" }}
{{- end }}

{{- /* With the producer taken from the topic the worker reads one topic per producer named: with none named it
refuses to start, and every pod would crash-loop. */}}
{{- if and (eq (toString .Values.producerIdentity) "topic") (not (trim (toString .Values.producers))) }}
{{- fail "producers is required with producerIdentity: topic: the producers whose topics <kafka.topics.request>.<producer> are read, e.g. catalogue,edits (IMAGE_WORKER_PRODUCERS)" }}
{{- end }}

{{- /* The console shows every request of the fleet and streams its images: never without a token in a cluster. */}}
{{- if and .Values.console.enabled (not .Values.secret.consoleToken) (not (and .Values.secret.existingSecret .Values.console.tokenInExistingSecret)) }}
{{- fail "console.enabled needs a token: --set-string secret.consoleToken=..., or the key IMAGE_WORKER_CONSOLE_TOKEN in secret.existingSecret with console.tokenInExistingSecret=true" }}
{{- end }}
{{- if and .Values.console.enabled .Values.console.producerAccess (ne (toString .Values.producerIdentity) "topic") }}
{{- fail "console.producerAccess needs producerIdentity: topic: with declared producers no producer is authenticated (IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS)" }}
{{- end }}
{{- if and .Values.console.enabled (has "cancel" .Values.console.actions) (not .Values.kafka.topics.cancel) }}
{{- fail "console.actions cancel needs the cancel topic: set kafka.topics.cancel (IMAGE_WORKER_TOPIC_CANCEL)" }}
{{- end }}

{{- /* A repository without a registry is looked up on Docker Hub (docker.io/library/image-worker for the default), where
this image is not: every pod would wait in ImagePullBackOff. Only an image loaded into the nodes themselves (kind load,
minikube image load) runs under such a name, with a pull policy that does not pull it. */}}
{{- if and (not (contains "/" .Values.image.repository)) (not (has .Values.image.pullPolicy (list "Never" "IfNotPresent"))) }}
{{- fail (printf "image.repository (%s) names no registry: the nodes would pull docker.io/library/%s, which is not this image, and every pod would wait in ImagePullBackOff. Push the image (./mvnw package -Pimage -DskipTests -Dimage.name=REGISTRY/image-worker:TAG -Dimage.push=true, or docker build and push) and set image.repository=REGISTRY/image-worker (and image.tag or image.digest); for an image loaded into the nodes (kind load docker-image, minikube image load) set image.pullPolicy=Never" .Values.image.repository .Values.image.repository) }}
{{- end }}

{{- /* With the NetworkPolicy on, a port the worker dials that its rule leaves out fails only at run time: Kafka never
connects (the pods stay unready), a gateway call fails, or an image's upload fails after its call was billed. */}}
{{- if .Values.networkPolicy.enabled }}
{{- $dialed := list }}
{{- range splitList "," .Values.kafka.bootstrapServers }}
{{- if regexMatch ":[0-9]+$" (trim .) }}
{{- $dialed = append $dialed (dict "rule" "kafka" "value" "kafka.bootstrapServers" "address" (trim .) "port" (regexFind "[0-9]+$" (trim .) | int)) }}
{{- end }}
{{- end }}
{{- range list (dict "rule" "gateway" "value" "gateway.baseUrl" "url" .Values.gateway.baseUrl) (dict "rule" "objectStore" "value" "storage.endpoint" "url" (default "https://s3.amazonaws.com" .Values.storage.endpoint)) }}
{{- $url := urlParse .url }}
{{- $port := ternary 80 443 (eq $url.scheme "http") }}
{{- if regexMatch ":[0-9]+$" $url.host }}
{{- $port = regexFind "[0-9]+$" $url.host | int }}
{{- end }}
{{- $dialed = append $dialed (dict "rule" .rule "value" .value "address" .url "port" $port) }}
{{- end }}
{{- range $dialed }}
{{- $allowed := list }}
{{- range (index $.Values.networkPolicy .rule).ports }}
{{- $allowed = append $allowed (int .) }}
{{- end }}
{{- if not (has .port $allowed) }}
{{- fail (printf "networkPolicy.%s.ports (%s) leaves out port %d of %s (%s): the pods could not reach it through the NetworkPolicy; add the port" .rule (join ", " $allowed) .port .value .address) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* The key comes from exactly one place: with both, one would be silently ignored. */}}
{{- if and .Values.secret.existingSecret (include "image-worker.createSecret" .) }}
{{- fail "set either secret.existingSecret or the secret.gatewayApiKey/awsAccessKeyId/awsSecretAccessKey/consoleToken values, not both" }}
{{- end }}
{{- if and (not .Values.secret.existingSecret) (not .Values.secret.gatewayApiKey) }}
{{- fail "the gateway key is required: set secret.existingSecret (a Secret with the key IMAGE_WORKER_GATEWAY_API_KEY) or --set-string secret.gatewayApiKey=..." }}
{{- end }}

{{- /* Half a credential pair fails only at the first upload, after the gateway call was paid for. */}}
{{- if and (not .Values.secret.existingSecret) (ne (empty .Values.secret.awsAccessKeyId) (empty .Values.secret.awsSecretAccessKey)) }}
{{- fail "secret.awsAccessKeyId and secret.awsSecretAccessKey go together: set both, or neither to use the AWS SDK's default chain" }}
{{- end }}

{{- /* The guards below read the values the worker runs with; one taken from a Secret or ConfigMap they cannot see. */}}
{{- $literalOnly := concat (splitList " " (include "image-worker.pinnedEnvNames" .)) (splitList " " (include "image-worker.guardEnvNames" .)) (list "IMAGE_WORKER_STORAGE_PING_TIMEOUT") }}
{{- range .Values.extraEnv }}
{{- if and (has .name $literalOnly) (not (hasKey . "value")) }}
{{- fail (printf "extraEnv must give %s as a literal value (or set it through the chart's own value): the chart checks it against the pod's grace, the rebalance grace, the poll interval and the probes (or reads the JVM options and the profiles for settings that would replace those), and cannot read it from valueFrom" .name) }}
{{- end }}
{{- end }}

{{- /* The same settings under another name that outranks them: a profile's (_PROD_IMAGE_WORKER_SHUTDOWN_GRACE is
%prod.image-worker.shutdown-grace, which wins over the plain name in the same source), or the priority lane's or the
parked topic's own poll interval (each follows the request channel's unless set; the chart writes them with it). */}}
{{- $pinnedPattern := printf "^_[A-Za-z0-9_]+_(%s)$" (join "|" (splitList " " (include "image-worker.pinnedEnvNames" .))) }}
{{- range .Values.extraEnv }}
{{- if or (regexMatch $pinnedPattern .name) (regexMatch "^(_[A-Za-z0-9_]+_)?MP_MESSAGING_INCOMING_(PRIORITY|PARKED)_REQUESTS_MAX_POLL_INTERVAL_MS$" .name) }}
{{- fail (printf "extraEnv must not set %s: it would replace a setting the chart checks (the gateway timeout, the infrastructure patience, the shutdown or rebalance grace, the poll interval) behind the chart's back; set the plain name (extraEnv IMAGE_WORKER_..., or the chart's value) instead" .name) }}
{{- end }}
{{- end }}

{{- /* A -D system property outranks every environment variable in MicroProfile Config: one on a checked setting would
replace, unseen, what the guards checked; one on the profile would make other profile-prefixed names count than those
the chart writes. jvm.extraOpts, and the JVM option variables given in extraEnv, are read for them (any spelling:
image-worker.shutdown-grace, IMAGE_WORKER_SHUTDOWN_GRACE, %prod.image-worker.shutdown-grace). */}}
{{- $jvmOptions := list (dict "source" "jvm.extraOpts" "text" (toString .Values.jvm.extraOpts)) }}
{{- range .Values.extraEnv }}
{{- if and (has .name (list "JAVA_OPTS_APPEND" "JAVA_OPTS" "JAVA_TOOL_OPTIONS" "JDK_JAVA_OPTIONS")) (hasKey . "value") }}
{{- $jvmOptions = append $jvmOptions (dict "source" (printf "extraEnv %s" .name) "text" (toString .value)) }}
{{- end }}
{{- end }}
{{- $guardedProperties := list "image-worker.gateway.timeout" "image-worker.retry.infrastructure-patience" "image-worker.shutdown-grace" "image-worker.rebalance-grace" "mp.messaging.incoming.requests.max.poll.interval.ms" "mp.messaging.incoming.priority-requests.max.poll.interval.ms" "mp.messaging.incoming.parked-requests.max.poll.interval.ms" "quarkus.profile" "quarkus.config.profile.parent" }}
{{- range $jvmOptions }}
{{- $source := .source }}
{{- range regexSplit "\\s+" (trim .text) -1 }}
{{- $option := trimAll "\"'" . }}
{{- if hasPrefix "-D" $option }}
{{- $name := first (splitList "=" (trimPrefix "-D" $option)) }}
{{- $normalized := regexReplaceAll "[^a-z0-9]" (lower $name) "_" }}
{{- range $guardedProperties }}
{{- $property := regexReplaceAll "[^a-z0-9]" . "_" }}
{{- if or (eq $normalized $property) (and (hasPrefix "_" $normalized) (hasSuffix (printf "_%s" $property) $normalized)) }}
{{- fail (printf "%s must not set %s (-D%s): a system property outranks the environment, so the worker would run with it instead of the value the chart checked against the pod's grace and the poll interval; set it through the chart's value (gateway.timeout, shutdownGraceSeconds, rebalanceGraceSeconds, kafka.maxPollIntervalMs) or extraEnv (%s)" $source . $name (upper $property)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- /* A grace shorter than one call, its store and its publish cuts the slowest calls off at every rollout: the next pod
makes them, and pays, again. */}}
{{- $callSeconds := include "image-worker.gatewayTimeoutSeconds" . | int }}
{{- $patienceSeconds := include "image-worker.infrastructurePatienceSeconds" . | int }}
{{- $coverSeconds := include "image-worker.callCoverSeconds" . | int }}
{{- $graceSeconds := include "image-worker.shutdownGraceSeconds" . | int }}
{{- if and (lt $graceSeconds $coverSeconds) (not .Values.allowShortShutdownGrace) }}
{{- fail (printf "the shutdown grace (%ds: shutdownGraceSeconds, or IMAGE_WORKER_SHUTDOWN_GRACE in extraEnv) is shorter than the gateway timeout + the infrastructure patience (%ds + %ds = %ds: gateway.timeout, or IMAGE_WORKER_GATEWAY_TIMEOUT in extraEnv; IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE in extraEnv, 2m by default): every rollout, scale-in and node drain would cut off the slowest calls in flight, or leave them no time to be stored and published, and the next pod makes them and pays for them again. Raise it to at least %d, or set allowShortShutdownGrace=true to accept the cost" $graceSeconds $callSeconds $patienceSeconds $coverSeconds $coverSeconds) }}
{{- end }}

{{- /* Partitions a rebalance takes away (every scale-out, rollout surge, scale-in) wait this long for their calls in
flight; a shorter wait gives a call still running to the new owner, which makes it and pays for it again. */}}
{{- $rebalanceSeconds := include "image-worker.rebalanceGraceSeconds" . | int }}
{{- if and (lt $rebalanceSeconds $coverSeconds) (not .Values.allowShortRebalanceGrace) }}
{{- fail (printf "the rebalance grace (%ds: rebalanceGraceSeconds, or IMAGE_WORKER_REBALANCE_GRACE in extraEnv) is shorter than the gateway timeout + the infrastructure patience (%ds + %ds = %ds: gateway.timeout, or IMAGE_WORKER_GATEWAY_TIMEOUT in extraEnv; IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE in extraEnv, 2m by default): at every scale-out, rollout and scale-in the partitions' new owner would make the calls still in flight again, and pay for them twice. Leave rebalanceGraceSeconds empty to derive it, raise it to at least %d, or set allowShortRebalanceGrace=true to accept the cost" $rebalanceSeconds $callSeconds $patienceSeconds $coverSeconds $coverSeconds) }}
{{- end }}

{{- /* The revocation waits inside Kafka's rebalance callback, on the polling thread: a poll interval shorter than the
wait + 60 s gets the pod thrown out of the group mid-wait (and the worker refuses to start with it). */}}
{{- $pollMs := include "image-worker.maxPollIntervalMs" . | int64 }}
{{- $leastPollMs := mul (add $rebalanceSeconds 60) 1000 }}
{{- if lt $pollMs $leastPollMs }}
{{- fail (printf "max.poll.interval.ms (%d: kafka.maxPollIntervalMs, or MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS in extraEnv) must be at least the rebalance grace + 60 s (%d ms): the partitions a rebalance takes away wait for their calls inside the poll loop, and the worker refuses to start below it; leave kafka.maxPollIntervalMs empty to derive it" $pollMs $leastPollMs) }}
{{- end }}

{{- /* A SIGKILL during the drain abandons calls the gateway has already billed; they run again on redelivery. */}}
{{- if not (kindIs "invalid" .Values.terminationGracePeriodSeconds) }}
{{- $minimum := add $graceSeconds 10 }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (int $minimum) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be at least the shutdown grace + 10 (%d), or the pod is killed while in-flight gateway calls drain; leave it empty to derive it" (int .Values.terminationGracePeriodSeconds) (int $minimum)) }}
{{- end }}
{{- end }}

{{- /* With acks=all, a topic whose min.insync.replicas exceeds its replicas refuses every write: no result could be published. */}}
{{- if gt (int .Values.topics.minInsyncReplicas) (int .Values.topics.replicationFactor) }}
{{- fail (printf "topics.minInsyncReplicas (%d) exceeds topics.replicationFactor (%d): with acks=all every result would be refused; lower it (2 with 3 replicas, 1 with 1)" (int .Values.topics.minInsyncReplicas) (int .Values.topics.replicationFactor)) }}
{{- end }}

{{- /* A parked request's source offset is committed when it is parked: a copy deleted before it is read back is lost
without a word, so the parked topic must keep its records longer than any of them may wait. */}}
{{- if .Values.kafka.topics.requestParked }}
{{- $kept := include "image-worker.parkedRetentionMs" . | int64 }}
{{- $least := include "image-worker.parkedRetentionLeastMs" . | int64 }}
{{- if lt $kept $least }}
{{- fail (printf "topics.parkedRetention (%s, %d ms) is shorter than the longest a parked request may wait (%d ms: a pause on a dead token over a weekend, 3 days, and with the spend guard two of its longest windows): a parked copy deleted before it is read back is a request lost without a word, its offset in %s already committed. Raise it, e.g. to 7d" (toString .Values.topics.parkedRetention) $kept $least .Values.kafka.topics.request) }}
{{- end }}
{{- end }}

{{- /* Each topic's partitions go to one pod each: a pod beyond the partitions idles, started and paid for nothing. */}}
{{- if and .Values.keda.enabled (gt (int .Values.keda.maxReplicaCount) (int .Values.topics.partitions)) }}
{{- fail (printf "keda.maxReplicaCount (%d) exceeds topics.partitions (%d): each partition of %s goes to one pod, so the pods beyond it would idle; lower keda.maxReplicaCount, or raise topics.partitions" (int .Values.keda.maxReplicaCount) (int .Values.topics.partitions) .Values.kafka.topics.request) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.maxReplicas) (int .Values.topics.partitions)) }}
{{- fail (printf "autoscaling.maxReplicas (%d) exceeds topics.partitions (%d): each partition of %s goes to one pod, so the pods beyond it would idle; lower autoscaling.maxReplicas, or raise topics.partitions" (int .Values.autoscaling.maxReplicas) (int .Values.topics.partitions) .Values.kafka.topics.request) }}
{{- end }}

{{- /* The Topic Operator only acts on KafkaTopics labelled with its cluster's name. */}}
{{- if and (eq .Values.topics.create "strimzi") (not .Values.topics.strimzi.cluster) }}
{{- fail "topics.strimzi.cluster is required with topics.create=strimzi: the name of the Strimzi Kafka cluster (label strimzi.io/cluster)" }}
{{- end }}

{{- /* A readiness probe that times out before the store's ping does marks pods unready at every slow ping: readiness flaps. */}}
{{- $pingSeconds := include "image-worker.durationSeconds" (include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_STORAGE_PING_TIMEOUT" "default" "2s")) | int }}
{{- if lt (int .Values.readinessProbe.timeoutSeconds) (add $pingSeconds 1 | int) }}
{{- fail (printf "readinessProbe.timeoutSeconds (%d) must exceed the store's ping timeout (IMAGE_WORKER_STORAGE_PING_TIMEOUT, %ds) by at least 1 s, or readiness flaps whenever the store is slow" (int .Values.readinessProbe.timeoutSeconds) $pingSeconds) }}
{{- end }}

{{- /* KEDA creates its own HorizontalPodAutoscaler; two autoscalers on one Deployment fight over its replicas. */}}
{{- if and .Values.autoscaling.enabled .Values.keda.enabled }}
{{- fail "autoscaling.enabled and keda.enabled are mutually exclusive: KEDA manages its own HorizontalPodAutoscaler" }}
{{- end }}

{{- /* The API rejects a PodDisruptionBudget with both; say which values to change instead. */}}
{{- if and .Values.podDisruptionBudget.enabled (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) }}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (set the other to null)" }}
{{- end }}

{{- range .Values.extraEnv }}
{{- /* A literal value would sit in the Deployment, readable by whoever may read Deployments, and in the release. */}}
{{- if and (has .name (list "IMAGE_WORKER_GATEWAY_API_KEY" "AWS_SECRET_ACCESS_KEY" "IMAGE_WORKER_CONSOLE_TOKEN")) (hasKey . "value") }}
{{- fail (printf "extraEnv must not carry %s as a literal value: put it in the Secret (secret.existingSecret) or use valueFrom.secretKeyRef" .name) }}
{{- end }}
{{- /* The KEDA trigger reads kafka.*: a worker consuming another group, topic or cluster would be scaled on a lag it does not have. */}}
{{- if has .name (list "KAFKA_BOOTSTRAP_SERVERS" "IMAGE_WORKER_CONSUMER_GROUP" "IMAGE_WORKER_TOPIC_REQUEST" "IMAGE_WORKER_TOPIC_REQUEST_PRIORITY" "IMAGE_WORKER_TOPIC_REQUEST_PARKED") }}
{{- fail (printf "extraEnv must not set %s: set kafka.bootstrapServers, kafka.consumerGroup, kafka.topics.request, kafka.topics.requestPriority or kafka.topics.requestParked instead, which the KEDA triggers read as well" .name) }}
{{- end }}
{{- end }}

{{- end }}
