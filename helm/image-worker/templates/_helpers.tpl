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
JAVA_OPTS_APPEND for the base image's run-java.sh: its two flags, the processor count, the user's options.
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
The topics the worker uses, with the partitions each gets: the request and result topics (and the priority lane's and
the image.started topic, when named) topics.partitions, the DLQ topics.dlqPartitions, and the spend guard's log one,
when a cap is set. A list of "name:partitions".
*/}}
{{- define "image-worker.topics" -}}
{{- $topics := list }}
{{- range (compact (list .Values.kafka.topics.request .Values.kafka.topics.requestPriority .Values.kafka.topics.completed .Values.kafka.topics.failed .Values.kafka.topics.status)) }}
{{- $topics = append $topics (printf "%s:%d" . (int $.Values.topics.partitions)) }}
{{- end }}
{{- $topics = append $topics (printf "%s:%d" .Values.kafka.topics.dlq (int .Values.topics.dlqPartitions)) }}
{{- if not (kindIs "invalid" .Values.budget.maxCalls) }}
{{- $topics = append $topics (printf "%s:1" .Values.kafka.topics.budget) }}
{{- end }}
{{- join " " $topics }}
{{- end }}

{{/*
Retention of the spend guard's log in milliseconds: two windows, at least a day.
*/}}
{{- define "image-worker.budgetRetentionMs" -}}
{{- max (mul (include "image-worker.durationSeconds" .Values.budget.window | int64) 2000) 86400000 }}
{{- end }}

{{/*
True (non-empty) when the chart creates the Secret from values.
*/}}
{{- define "image-worker.createSecret" -}}
{{- if or .Values.secret.gatewayApiKey .Values.secret.awsAccessKeyId .Values.secret.awsSecretAccessKey }}true{{ end }}
{{- end }}

{{/*
Name of the Secret read through envFrom: the user's existing one, or the one this chart creates.
*/}}
{{- define "image-worker.secretName" -}}
{{- default (include "image-worker.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{/*
Seconds between SIGTERM and SIGKILL. Derived from the worker's shutdown grace unless set explicitly:
the 30 extra seconds cover committing offsets, flushing the producer and closing the clients after the drain.
*/}}
{{- define "image-worker.terminationGracePeriodSeconds" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add (int .Values.shutdownGraceSeconds) 30 }}
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
