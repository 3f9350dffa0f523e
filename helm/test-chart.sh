#!/usr/bin/env bash
# Checks the image-worker chart without a cluster: lint, render with every ci/ values file, each fail guard and
# schema rule refuses what it should, and the plain manifests in deploy/ set the same environment as the chart.
# Needs `helm` (v3 or v4) and python3 with PyYAML; `kubectl` (for its kustomize) is optional.
set -euo pipefail
cd "$(dirname "$0")"
chart=image-worker
required=(--set kafka.bootstrapServers=kafka:9092 --set gateway.baseUrl=https://gw.example.com
  --set gateway.model=m --set secret.existingSecret=s)
passed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

for values in "$chart"/ci/*.yaml; do
  if helm lint --strict "$chart" -f "$values" > "$log" 2>&1; then ok "lint $values"; else cat "$log"; bad "lint $values"; fi
  if helm template t "$chart" -f "$values" > /dev/null; then ok "render $values"; else bad "render $values"; fi
done

# refuses NAME EXPECTED-MESSAGE-FRAGMENT HELM-ARGS...: rendering must fail and say why.
refuses() {
  local name=$1 fragment=$2
  shift 2
  if out=$(helm template t "$chart" "$@" 2>&1); then
    bad "$name (rendered)"
  elif grep -qF -- "$fragment" <<< "$out"; then
    ok "$name"
  else
    echo "$out"
    bad "$name (wrong message)"
  fi
}

refuses "no bootstrap servers" "kafka.bootstrapServers is required" --set gateway.baseUrl=https://g --set gateway.model=m --set secret.existingSecret=s
refuses "no gateway URL" "gateway.baseUrl is required" --set kafka.bootstrapServers=k:9092 --set gateway.model=m --set secret.existingSecret=s
refuses "no model" "gateway.model is required" --set kafka.bootstrapServers=k:9092 --set gateway.baseUrl=https://g --set secret.existingSecret=s
refuses "no key at all" "the gateway key is required" "${required[@]}" --set secret.existingSecret=
refuses "existing Secret and inline key" "not both" "${required[@]}" --set-string secret.gatewayApiKey=sk-x
refuses "half an AWS key pair" "go together" "${required[@]}" --set secret.existingSecret= \
  --set-string secret.gatewayApiKey=sk-x --set-string secret.awsAccessKeyId=id
refuses "termination grace inside the drain" "must be at least shutdownGraceSeconds + 10" "${required[@]}" \
  --set shutdownGraceSeconds=60 --set terminationGracePeriodSeconds=65
refuses "HPA and KEDA together" "mutually exclusive" "${required[@]}" --set autoscaling.enabled=true --set keda.enabled=true
refuses "PDB with both bounds" "not both" "${required[@]}" --set podDisruptionBudget.enabled=true --set podDisruptionBudget.minAvailable=1
refuses "schema: unknown top-level value" "replicas" "${required[@]}" --set replicas=3
refuses "schema: bad edit mode" "editMode" "${required[@]}" --set gateway.editMode=all
refuses "schema: concurrency 0" "concurrency" "${required[@]}" --set concurrency=0
refuses "schema: bad duration" "timeout" "${required[@]}" --set gateway.timeout=soon

# The derived termination grace follows the shutdown grace.
grace=$(helm template t "$chart" "${required[@]}" --set shutdownGraceSeconds=100 | grep -E '^ +terminationGracePeriodSeconds:' | awk '{print $2}')
[[ $grace == 130 ]] && ok "terminationGracePeriodSeconds derived (130)" || bad "terminationGracePeriodSeconds derived: $grace"

# checksum/config changes with the configuration, so pods roll.
a=$(helm template t "$chart" "${required[@]}" | grep checksum/config)
b=$(helm template t "$chart" "${required[@]}" --set concurrency=8 | grep checksum/config)
[[ $a != "$b" ]] && ok "checksum/config follows the ConfigMap" || bad "checksum/config unchanged"

# No Secret is created unless a key is given, and no default holds a key.
if helm template t "$chart" "${required[@]}" | grep -q '^kind: Secret'; then bad "Secret created without values"; else ok "no Secret by default"; fi

# deploy/ sets the same variables as the chart (a default release plus the values deploy/ sets).
chart_keys=$(helm template t "$chart" "${required[@]}" --set storage.endpoint=http://s3 --set storage.region=r \
  | python3 -c 'import sys,yaml; print("\n".join(sorted(next(d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"]=="ConfigMap")["data"])))')
deploy_keys=$(python3 -c 'import yaml; print("\n".join(sorted(yaml.safe_load(open("../deploy/configmap.yaml"))["data"])))')
if [[ $chart_keys == "$deploy_keys" ]]; then ok "deploy/configmap.yaml has the chart's keys"; else
  diff <(echo "$chart_keys") <(echo "$deploy_keys") || true; bad "deploy/configmap.yaml keys differ from the chart's"; fi
if command -v kubectl > /dev/null; then
  if kubectl kustomize ../deploy > /dev/null; then ok "kustomize build deploy/"; else bad "kustomize build deploy/"; fi
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
