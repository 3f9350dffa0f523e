#!/bin/sh
# The worker's entrypoint in its image (./Dockerfile, src/main/docker/Dockerfile.jvm), at the path of the Red Hat runtime
# images' run-java.sh (/opt/jboss/container/java/run/run-java.sh), whose settings it takes, so that the chart, the
# manifests, compose and the Jib image (on that base) start and configure the worker the same way:
#   JAVA_MAX_MEM_RATIO  the heap's share of the container memory limit, in percent (default 80);
#   JAVA_OPTS_APPEND    more JVM options, after these (the image sets the two the worker needs);
#   JAVA_APP_JAR        the jar (default /deployments/quarkus-run.jar);
#   JAVA_AOT_CACHE      the JDK 25 AOT cache trained at build time (default /deployments/app/image-worker.aot): used
#                       when the file is there; a cache the JVM cannot use costs a warning, not the start. Empty: none.
# The parallel collector and an exit on OutOfMemoryError, as run-java.sh chose them, before JAVA_OPTS_APPEND (a later
# option wins). The cache was trained with the same options: it keeps what they decided.
set -eu
# The chart writes JAVA_TOOL_OPTIONS and JDK_JAVA_OPTIONS in every pod, empty unless given, so that no envFrom source can
# set them: an empty one is unset here, or the JVM would print "Picked up JAVA_TOOL_OPTIONS: " at every start.
[ -n "${JAVA_TOOL_OPTIONS-}" ] || unset JAVA_TOOL_OPTIONS
[ -n "${JDK_JAVA_OPTIONS-}" ] || unset JDK_JAVA_OPTIONS
cache="${JAVA_AOT_CACHE-/deployments/app/image-worker.aot}"
aot=""
if [ -n "$cache" ] && [ -f "$cache" ]; then
  aot="-XX:AOTCache=$cache"
fi
# Word splitting of the option lists is wanted: each is a space-separated list of options.
# shellcheck disable=SC2086
exec java -XX:MaxRAMPercentage="${JAVA_MAX_MEM_RATIO:-80}" -XX:+UseParallelGC -XX:+ExitOnOutOfMemoryError $aot \
  ${JAVA_OPTS_APPEND:-} -jar "${JAVA_APP_JAR:-/deployments/quarkus-run.jar}"
