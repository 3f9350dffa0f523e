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

{{- /* The key comes from exactly one place: with both, one would be silently ignored. */}}
{{- if and .Values.secret.existingSecret (include "image-worker.createSecret" .) }}
{{- fail "set either secret.existingSecret or the secret.gatewayApiKey/awsAccessKeyId/awsSecretAccessKey values, not both" }}
{{- end }}
{{- if and (not .Values.secret.existingSecret) (not .Values.secret.gatewayApiKey) }}
{{- fail "the gateway key is required: set secret.existingSecret (a Secret with the key IMAGE_WORKER_GATEWAY_API_KEY) or --set-string secret.gatewayApiKey=..." }}
{{- end }}

{{- /* Half a credential pair fails only at the first upload, after the gateway call was paid for. */}}
{{- if and (not .Values.secret.existingSecret) (ne (empty .Values.secret.awsAccessKeyId) (empty .Values.secret.awsSecretAccessKey)) }}
{{- fail "secret.awsAccessKeyId and secret.awsSecretAccessKey go together: set both, or neither to use the AWS SDK's default chain" }}
{{- end }}

{{- /* The guards below read the values the worker runs with; one taken from a Secret or ConfigMap they cannot see. */}}
{{- range .Values.extraEnv }}
{{- if and (has .name (list "IMAGE_WORKER_GATEWAY_TIMEOUT" "IMAGE_WORKER_SHUTDOWN_GRACE" "IMAGE_WORKER_STORAGE_PING_TIMEOUT")) (not (hasKey . "value")) }}
{{- fail (printf "extraEnv must give %s as a literal value (or set it through the chart's own value): the chart checks it against the pod's grace and probes, and cannot read it from valueFrom" .name) }}
{{- end }}
{{- end }}

{{- /* A grace shorter than one call cuts the slowest calls off at every rollout: the next pod makes them, and pays, again. */}}
{{- $callSeconds := include "image-worker.gatewayTimeoutSeconds" . | int }}
{{- $graceSeconds := include "image-worker.shutdownGraceSeconds" . | int }}
{{- if and (lt $graceSeconds $callSeconds) (not .Values.allowShortShutdownGrace) }}
{{- fail (printf "the shutdown grace (%ds: shutdownGraceSeconds, or IMAGE_WORKER_SHUTDOWN_GRACE in extraEnv) is shorter than the gateway timeout (%ds: gateway.timeout, or IMAGE_WORKER_GATEWAY_TIMEOUT in extraEnv): every rollout, scale-in and node drain would cut off the calls in flight, which the next pod makes and pays for again. Raise it (the timeout + 120 s covers a call, its store and its publish), or set allowShortShutdownGrace=true to accept the cost" $graceSeconds $callSeconds) }}
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
{{- if and (has .name (list "IMAGE_WORKER_GATEWAY_API_KEY" "AWS_SECRET_ACCESS_KEY")) (hasKey . "value") }}
{{- fail (printf "extraEnv must not carry %s as a literal value: put it in the Secret (secret.existingSecret) or use valueFrom.secretKeyRef" .name) }}
{{- end }}
{{- /* The KEDA trigger reads kafka.*: a worker consuming another group, topic or cluster would be scaled on a lag it does not have. */}}
{{- if has .name (list "KAFKA_BOOTSTRAP_SERVERS" "IMAGE_WORKER_CONSUMER_GROUP" "IMAGE_WORKER_TOPIC_REQUEST" "IMAGE_WORKER_TOPIC_REQUEST_PRIORITY") }}
{{- fail (printf "extraEnv must not set %s: set kafka.bootstrapServers, kafka.consumerGroup, kafka.topics.request or kafka.topics.requestPriority instead, which the KEDA triggers read as well" .name) }}
{{- end }}
{{- end }}

{{- end }}
