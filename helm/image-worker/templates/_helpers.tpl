{{/*
Expand the name of the chart.
*/}}
{{- define "image-worker.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
If release name contains chart name it will be used as a full name.
*/}}
{{- define "image-worker.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Create chart name and version as used by the chart label.
*/}}
{{- define "image-worker.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "image-worker.labels" -}}
helm.sh/chart: {{ include "image-worker.chart" . }}
{{ include "image-worker.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels
*/}}
{{- define "image-worker.selectorLabels" -}}
app.kubernetes.io/name: {{ include "image-worker.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels of the `helm test` pod: the release's, but never the workers' selector (a name of its own), so the Service, the
PodDisruptionBudget and the workers' NetworkPolicy do not take it for a worker.
*/}}
{{- define "image-worker.testLabels" -}}
helm.sh/chart: {{ include "image-worker.chart" . }}
{{ include "image-worker.testSelectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "image-worker.testSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-test" (include "image-worker.name" . | trunc 58 | trimSuffix "-") }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "image-worker.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "image-worker.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The container image, tag defaulting to the chart's appVersion; pinned to image.digest when one is given.
*/}}
{{- define "image-worker.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The image pull policy: image.pullPolicy, or Always for a reference that moves (no digest, a latest or -SNAPSHOT tag),
else IfNotPresent.
*/}}
{{- define "image-worker.imagePullPolicy" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.pullPolicy }}
{{- .Values.image.pullPolicy }}
{{- else if and (not .Values.image.digest) (or (eq $tag "latest") (hasSuffix "-SNAPSHOT" $tag)) }}
{{- "Always" }}
{{- else }}
{{- "IfNotPresent" }}
{{- end }}
{{- end }}

{{/*
JAVA_OPTS_APPEND for the base image's run-java.sh: its two flags (the variable replaces the image's, so they are
repeated first), the processor count, the user's options.
*/}}
{{- define "image-worker.javaOpts" -}}
{{- $opts := list "-Dquarkus.http.host=0.0.0.0" "-Djava.util.logging.manager=org.jboss.logmanager.LogManager" }}
{{- if not (kindIs "invalid" .Values.jvm.activeProcessorCount) }}
{{- $opts = append $opts (printf "-XX:ActiveProcessorCount=%d" (int .Values.jvm.activeProcessorCount)) }}
{{- end }}
{{- with .Values.jvm.extraOpts }}
{{- $opts = append $opts . }}
{{- end }}
{{- join " " $opts }}
{{- end }}

{{/*
The topics the worker uses, with the partitions each gets: the request and result topics (and the priority lane's, the
parked topic and the image.started topic, when named) topics.partitions, the DLQ topics.dlqPartitions, the cancel topic one (when
named), and the spend guard's log one, when a cap is set. A list of "name:partitions".
*/}}
{{- define "image-worker.topics" -}}
{{- $topics := list }}
{{- range (compact (list .Values.kafka.topics.request .Values.kafka.topics.requestPriority)) }}
{{- range splitList " " (include "image-worker.perProducer" (dict "root" $ "topic" .)) }}
{{- $topics = append $topics (printf "%s:%d" . (int $.Values.topics.partitions)) }}
{{- end }}
{{- end }}
{{- range (compact (list .Values.kafka.topics.requestParked .Values.kafka.topics.completed .Values.kafka.topics.failed .Values.kafka.topics.status)) }}
{{- $topics = append $topics (printf "%s:%d" . (int $.Values.topics.partitions)) }}
{{- end }}
{{- $topics = append $topics (printf "%s:%d" .Values.kafka.topics.dlq (int .Values.topics.dlqPartitions)) }}
{{- with include "image-worker.cancelTopics" . }}
{{- range splitList " " . }}
{{- $topics = append $topics (printf "%s:1" .) }}
{{- end }}
{{- end }}
{{- if include "image-worker.spendGuardOn" . }}
{{- $topics = append $topics (printf "%s:1" .Values.kafka.topics.budget) }}
{{- end }}
{{- join " " $topics }}
{{- end }}

{{/*
The topics a topic the producers write stands for, space-separated (dict "root" . "topic" name): the topic itself, or
with producerIdentity topic one per producer of producers, <topic>.<producer> (issue 49), as the worker reads them.
*/}}
{{- define "image-worker.perProducer" -}}
{{- if eq (toString .root.Values.producerIdentity) "topic" }}
{{- $topics := list }}
{{- range splitList "," (toString .root.Values.producers) }}
{{- with trim . }}
{{- $topics = append $topics (printf "%s.%s" $.topic .) }}
{{- end }}
{{- end }}
{{- join " " $topics }}
{{- else }}
{{- .topic }}
{{- end }}
{{- end }}

{{/*
The cancel topics, space-separated, none when cancellation is off: kafka.topics.cancel, or each producer's with
producerIdentity topic.
*/}}
{{- define "image-worker.cancelTopics" -}}
{{- with .Values.kafka.topics.cancel }}
{{- include "image-worker.perProducer" (dict "root" $ "topic" .) }}
{{- end }}
{{- end }}

{{/*
Retention of the spend guard's log in milliseconds: two of the longest windows (the fleet's, or a producer's of
budget.perProducer), at least a day.
*/}}
{{- define "image-worker.budgetRetentionMs" -}}
{{- $longest := include "image-worker.durationSeconds" .Values.budget.window | int64 }}
{{- range splitList "," .Values.budget.perProducer }}
{{- if contains "/" . }}
{{- $window := include "image-worker.durationSeconds" (last (splitList "/" .)) | int64 }}
{{- if gt $window $longest }}{{ $longest = $window }}{{ end }}
{{- end }}
{{- end }}
{{- max (mul $longest 2000) 86400000 }}
{{- end }}

{{/*
Retention of the parked topic in milliseconds (topics.parkedRetention). A parked request's source offset is committed
when it is parked: a copy the broker deletes before it is read back is lost. _validate.tpl checks it against the
longest a parked request may wait.
*/}}
{{- define "image-worker.parkedRetentionMs" -}}
{{- mul (include "image-worker.durationSeconds" .Values.topics.parkedRetention | int64) 1000 }}
{{- end }}

{{/*
The least the parked topic must keep, in milliseconds: a pause on a dead token over a weekend (3 days), and, with the
spend guard on, two of its longest windows (a request held for the next window, and that window full too).
*/}}
{{- define "image-worker.parkedRetentionLeastMs" -}}
{{- $least := int64 259200000 }}
{{- if include "image-worker.spendGuardOn" . }}
{{- $least = max $least (include "image-worker.budgetRetentionMs" . | int64) }}
{{- end }}
{{- $least }}
{{- end }}

{{/*
Retention of the cancel topic in milliseconds: twice cancel.retention (how far back a starting pod reads it), at least
a day. The topic is compact,delete: every requestId is new, so compaction alone would keep every cancel forever.
cancel.retention may be fractional (1.5h) or ISO-8601 (PT1H30M), as the worker reads it.
*/}}
{{- define "image-worker.cancelTopicRetentionMs" -}}
{{- $text := toString .Values.cancel.retention | trim }}
{{- $seconds := 0.0 }}
{{- $units := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 "d" 86400.0 "" 1.0 "S" 1.0 "M" 60.0 "H" 3600.0 "D" 86400.0 }}
{{- if hasPrefix "P" $text }}
{{- range regexFindAll "[0-9.]+[DHMS]" $text -1 }}
{{- $unit := regexFind "[DHMS]$" . }}
{{- $seconds = addf $seconds (mulf (trimSuffix $unit . | float64) (get $units $unit)) }}
{{- end }}
{{- else }}
{{- $unit := regexFind "(ms|s|m|h|d)?$" $text }}
{{- $seconds = mulf (trimSuffix $unit $text | float64) (get $units $unit) }}
{{- end }}
{{- max (mul (ceil $seconds | int64) 2000) 86400000 }}
{{- end }}

{{/*
The activation lag of the parked topic's KEDA trigger: keda.parkedActivationLagThreshold, else the most commit markers
its drained partitions can keep (one per replica parking into a partition at once): topics.partitions x
keda.maxReplicaCount.
*/}}
{{- define "image-worker.parkedActivationLagThreshold" -}}
{{- if kindIs "invalid" .Values.keda.parkedActivationLagThreshold }}
{{- mul (int .Values.topics.partitions) (int .Values.keda.maxReplicaCount) }}
{{- else }}
{{- int .Values.keda.parkedActivationLagThreshold }}
{{- end }}
{{- end }}

{{/*
KEDA's formula (scalingModifiers) with the pause guard on, over the triggers of scaledobject.yaml (by name): the lag the
triggers would scale on (the largest, as the autoscaler takes the largest of its metrics), at least 1 while one of them
is above its activation threshold and 0 otherwise (the formula decides activation: above 0), and, while a pod is
paused, at most one pod's worth (keda.lagThreshold). Written for expr (KEDA casts the result to a float).
*/}}
{{- define "image-worker.kedaFormula" -}}
{{- $wake := list }}
{{- $lags := list }}
{{- range .triggers }}
{{- if eq .name "parked" }}
{{- $lags = append $lags .name }}
{{- else if eq .name "parkedBacklog" }}
{{- $wake = append $wake (printf "%s > %d" .name (int .activation)) }}
{{- else }}
{{- $lags = append $lags .name }}
{{- $wake = append $wake (printf "%s > %d" .name (int .activation)) }}
{{- end }}
{{- end }}
{{- $lag := first $lags }}
{{- if gt (len $lags) 1 }}
{{- $lag = printf "max(%s)" (join ", " $lags) }}
{{- end }}
{{- printf "(%s) ? (paused > 0 ? min(max(%s, 1), %d) : max(%s, 1)) : 0" (join " || " $wake) $lag (int .root.Values.keda.lagThreshold) $lag }}
{{- end }}

{{/*
The pause guard's PromQL query: 1 while a pod of the release is paused (intake on a dead token or a wrong address, or
requests held by the fleet's spend cap), else 0; keda.pauseGuard.query when set. The pods' series by the labels the
Prometheus Operator gives a ServiceMonitor's targets.
*/}}
{{- define "image-worker.pauseQuery" -}}
{{- if .Values.keda.pauseGuard.query }}
{{- .Values.keda.pauseGuard.query }}
{{- else }}
{{- $selector := printf "{namespace=%q,service=%q}" .Release.Namespace (include "image-worker.fullname" .) }}
{{- printf "max(clamp_max(image_worker_intake_paused%s + image_worker_budget_held_requests%s, 1))" $selector $selector }}
{{- end }}
{{- end }}

{{/*
True (non-empty) when the chart creates the Secret from values.
*/}}
{{- define "image-worker.createSecret" -}}
{{- if or .Values.secret.gatewayApiKey .Values.secret.awsAccessKeyId .Values.secret.awsSecretAccessKey .Values.secret.consoleToken .Values.secret.statusTokens }}true{{ end }}
{{- end }}

{{/*
Name of the Secret read through envFrom: the user's existing one, or the one this chart creates.
*/}}
{{- define "image-worker.secretName" -}}
{{- default (include "image-worker.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{/*
The value the worker runs with for the variable `name`: an extraEnv entry's `value` (env wins over the ConfigMap the
chart fills from values), else `default`. Guards read this, so a setting cannot slip past them through extraEnv. An
extraEnv entry that takes it from elsewhere (valueFrom) is refused in _validate.tpl.
Called as (include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_X" "default" .Values.x)).
*/}}
{{- define "image-worker.effectiveEnv" -}}
{{- $value := .default }}
{{- range .root.Values.extraEnv }}
{{- if and (eq .name $.name) (hasKey . "value") }}
{{- $value = .value }}
{{- end }}
{{- end }}
{{- $value }}
{{- end }}

{{/*
The gateway timeout the worker runs with (IMAGE_WORKER_GATEWAY_TIMEOUT): gateway.timeout unless extraEnv sets it; and
in whole seconds.
*/}}
{{- define "image-worker.gatewayTimeout" -}}
{{- include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_GATEWAY_TIMEOUT" "default" .Values.gateway.timeout) }}
{{- end }}

{{- define "image-worker.gatewayTimeoutSeconds" -}}
{{- include "image-worker.durationSeconds" (include "image-worker.gatewayTimeout" .) }}
{{- end }}

{{/*
The shutdown grace the worker runs with (IMAGE_WORKER_SHUTDOWN_GRACE): shutdownGraceSeconds unless extraEnv sets it;
and in whole seconds.
*/}}
{{- define "image-worker.shutdownGrace" -}}
{{- include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_SHUTDOWN_GRACE" "default" (printf "%ds" (int .Values.shutdownGraceSeconds))) }}
{{- end }}

{{- define "image-worker.shutdownGraceSeconds" -}}
{{- include "image-worker.durationSeconds" (include "image-worker.shutdownGrace" .) }}
{{- end }}

{{/*
The infrastructure patience the worker runs with (IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE): the worker's default
(2m) unless extraEnv sets it; and in whole seconds.
*/}}
{{- define "image-worker.infrastructurePatience" -}}
{{- include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE" "default" "2m") }}
{{- end }}

{{- define "image-worker.infrastructurePatienceSeconds" -}}
{{- include "image-worker.durationSeconds" (include "image-worker.infrastructurePatience" .) }}
{{- end }}

{{/*
What one request may take from its call's start to its result's publish, in whole seconds: the gateway timeout (a full
call) + the infrastructure patience (storing, downloading, publishing). The shutdown and rebalance graces cover it.
*/}}
{{- define "image-worker.callCoverSeconds" -}}
{{- add (include "image-worker.gatewayTimeoutSeconds" . | int64) (include "image-worker.infrastructurePatienceSeconds" . | int64) }}
{{- end }}

{{/*
The rebalance grace the worker runs with, in whole seconds: extraEnv's IMAGE_WORKER_REBALANCE_GRACE, else
rebalanceGraceSeconds, else derived as the worker derives it (the gateway timeout + the infrastructure patience).
*/}}
{{- define "image-worker.rebalanceGraceSeconds" -}}
{{- $default := include "image-worker.callCoverSeconds" . }}
{{- if not (kindIs "invalid" .Values.rebalanceGraceSeconds) }}
{{- $default = int64 .Values.rebalanceGraceSeconds }}
{{- end }}
{{- include "image-worker.durationSeconds" (include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_REBALANCE_GRACE" "default" (printf "%ds" (int64 $default)))) }}
{{- end }}

{{/*
The request channels' max.poll.interval.ms the worker runs with: extraEnv's MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS,
else kafka.maxPollIntervalMs, else the longer of 10 minutes and the rebalance grace + 60 s (the revocation waits for the
calls in flight inside Kafka's rebalance callback, on the polling thread: a longer wait would get the pod thrown out of
the group; the worker refuses to start below the grace + 60 s).
*/}}
{{- define "image-worker.maxPollIntervalMs" -}}
{{- $default := max 600000 (mul (add (include "image-worker.rebalanceGraceSeconds" . | int64) 60) 1000) }}
{{- if not (kindIs "invalid" .Values.kafka.maxPollIntervalMs) }}
{{- $default = int64 .Values.kafka.maxPollIntervalMs }}
{{- end }}
{{- include "image-worker.effectiveEnv" (dict "root" . "name" "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS" "default" (toString (int64 $default))) | trim }}
{{- end }}

{{/*
The settings the chart's guards check, which the chart writes itself in the container's `env` with the value it
checked (an extraEnv entry's literal value, else the chart's). Kubernetes lets an `env` entry win over a key of the same
name in any `envFrom` source, so neither extraEnvFrom nor the Secret (secret.existingSecret) can replace them; and
MicroProfile Config puts environment variables above every file source. JAVA_OPTS_APPEND is one of them: its `-D`
options would outrank the environment (checked in _validate.tpl). A space-separated list.
*/}}
{{- define "image-worker.pinnedEnvNames" -}}
IMAGE_WORKER_GATEWAY_TIMEOUT IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE IMAGE_WORKER_SHUTDOWN_GRACE IMAGE_WORKER_REBALANCE_GRACE MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS JAVA_OPTS_APPEND
{{- end }}

{{/*
What else could replace a checked setting from a source the chart cannot read, which the chart therefore writes in
`env` too: the priority lane's and the parked topic's poll intervals (their consumers join the group with the same
rebalance listener; written with the request channel's value, which they follow), the other JVM option variables
(their `-D` options outrank the environment; an extraEnv literal, checked, or empty), and the Quarkus profile and its
parent (they decide which profile-prefixed names count: each checked setting is written under each profile as well, see
image-worker.profiles). A space-separated list.
*/}}
{{- define "image-worker.guardEnvNames" -}}
MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS JAVA_OPTS JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS QUARKUS_PROFILE QUARKUS_CONFIG_PROFILE_PARENT
{{- end }}

{{/*
The Quarkus profiles the pod runs with: QUARKUS_PROFILE (an extraEnv literal, else `prod`, the packaged worker's own)
and QUARKUS_CONFIG_PROFILE_PARENT (an extraEnv literal, else none), comma lists. A space-separated list.
*/}}
{{- define "image-worker.profiles" -}}
{{- $profiles := list }}
{{- range (list (dict "name" "QUARKUS_PROFILE" "default" "prod") (dict "name" "QUARKUS_CONFIG_PROFILE_PARENT" "default" "")) }}
{{- range splitList "," (include "image-worker.effectiveEnv" (dict "root" $ "name" .name "default" .default)) }}
{{- if trim . }}
{{- $profiles = append $profiles (trim .) }}
{{- end }}
{{- end }}
{{- end }}
{{- join " " (uniq $profiles) }}
{{- end }}

{{/*
The `env` entries of the pinned settings, with the values the guards checked; then the other names that could replace
them (image-worker.guardEnvNames); then each checked setting of the worker's configuration again under each profile's
prefix (`_PROD_IMAGE_WORKER_SHUTDOWN_GRACE` is `%prod.image-worker.shutdown-grace`, which wins over the plain name),
with the same value.
*/}}
{{- define "image-worker.pinnedEnv" -}}
{{- $pollMs := include "image-worker.maxPollIntervalMs" . }}
{{- $settings := list
  (list "IMAGE_WORKER_GATEWAY_TIMEOUT" (include "image-worker.gatewayTimeout" .))
  (list "IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE" (include "image-worker.infrastructurePatience" .))
  (list "IMAGE_WORKER_SHUTDOWN_GRACE" (include "image-worker.shutdownGrace" .))
  (list "IMAGE_WORKER_REBALANCE_GRACE" (include "image-worker.effectiveEnv" (dict "root" . "name" "IMAGE_WORKER_REBALANCE_GRACE" "default" (printf "%ss" (include "image-worker.rebalanceGraceSeconds" .)))))
  (list "MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS" $pollMs)
  (list "MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS" $pollMs)
  (list "MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS" $pollMs) }}
{{- range $settings }}
- name: {{ index . 0 }}
  value: {{ index . 1 | quote }}
{{- end }}
- name: JAVA_OPTS_APPEND
  value: {{ include "image-worker.effectiveEnv" (dict "root" . "name" "JAVA_OPTS_APPEND" "default" (include "image-worker.javaOpts" .)) | quote }}
{{- range list "JAVA_OPTS" "JAVA_TOOL_OPTIONS" "JDK_JAVA_OPTIONS" }}
- name: {{ . }}
  value: {{ include "image-worker.effectiveEnv" (dict "root" $ "name" . "default" "") | quote }}
{{- end }}
- name: QUARKUS_PROFILE
  value: {{ include "image-worker.effectiveEnv" (dict "root" . "name" "QUARKUS_PROFILE" "default" "prod") | quote }}
- name: QUARKUS_CONFIG_PROFILE_PARENT
  value: {{ include "image-worker.effectiveEnv" (dict "root" . "name" "QUARKUS_CONFIG_PROFILE_PARENT" "default" "") | quote }}
{{- range $profile := splitList " " (include "image-worker.profiles" .) }}
{{- if $profile }}
{{- range $settings }}
- name: {{ printf "_%s_%s" (regexReplaceAll "[^A-Z0-9]" (upper $profile) "_") (index . 0) }}
  value: {{ index . 1 | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
extraEnv without the names the chart writes itself (the pinned settings and image-worker.guardEnvNames, with the same
value), as a YAML list or nothing.
*/}}
{{- define "image-worker.extraEnv" -}}
{{- $pinned := concat (splitList " " (include "image-worker.pinnedEnvNames" .)) (splitList " " (include "image-worker.guardEnvNames" .)) }}
{{- $rest := list }}
{{- range .Values.extraEnv }}
{{- if not (has .name $pinned) }}
{{- $rest = append $rest . }}
{{- end }}
{{- end }}
{{- with $rest }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
Seconds between SIGTERM and SIGKILL. Derived from the worker's shutdown grace unless set explicitly:
the 30 extra seconds cover committing offsets, flushing the producer and closing the clients after the drain.
*/}}
{{- define "image-worker.terminationGracePeriodSeconds" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add (include "image-worker.shutdownGraceSeconds" . | int) 30 }}
{{- else }}
{{- int .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/*
A duration as the worker reads it (180s, 3m, 1h, 1d, 500ms; a bare number is seconds), in whole seconds, rounded up.
values.schema.json admits only these forms.
*/}}
{{- define "image-worker.durationSeconds" -}}
{{- $text := toString . | trim }}
{{- if regexMatch "^[0-9]+s?$" $text }}
{{- trimSuffix "s" $text | int64 }}
{{- else if regexMatch "^[0-9]+ms$" $text }}
{{- div (add (trimSuffix "ms" $text | int64) 999) 1000 }}
{{- else if regexMatch "^[0-9]+m$" $text }}
{{- mul (trimSuffix "m" $text | int64) 60 }}
{{- else if regexMatch "^[0-9]+h$" $text }}
{{- mul (trimSuffix "h" $text | int64) 3600 }}
{{- else if regexMatch "^[0-9]+d$" $text }}
{{- mul (trimSuffix "d" $text | int64) 86400 }}
{{- else }}
{{- fail (printf "cannot read the duration %q: write it as 180s, 3m, 1h, 1d or 500ms" $text) }}
{{- end }}
{{- end }}

{{/*
Whether the spend guard is on (non-empty): a fleet cap (budget.maxCalls) or a producer's (budget.perProducer) is set,
so that the pods share kafka.topics.budget.
*/}}
{{- define "image-worker.spendGuardOn" -}}
{{- if or (not (kindIs "invalid" .Values.budget.maxCalls)) .Values.budget.perProducer }}on{{ end }}
{{- end }}
