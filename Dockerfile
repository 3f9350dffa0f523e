# syntax=docker/dockerfile:1
####
# image-worker from source, with nothing but Docker: no JDK, no Maven, no `./mvnw package` on the host.
#
#   docker build -t image-worker:1.0.0-SNAPSHOT .
#   docker compose up --build            (see docker-compose.yml)
#
# Stage `build` compiles and packages with the project's Maven wrapper (tests are not run here: `./mvnw verify` is the
# test command); its Maven folder (/cache/m2: the wrapper's Maven and the repository) is a BuildKit cache, so a rebuild
# after a code change downloads nothing.
# Stage `gateway-simulator` is the test suite's stand-in for the paid gateway, for `docker compose --profile demo up`.
# It also trains the JDK 25 AOT cache (JEP 483/514/515; docs/cold-start.md) the way `./mvnw package -Paot` does: the
# packaged worker against a real Kafka broker, S3 store and gateway simulator (the test infrastructure, in the build
# stage only), a few hundred requests, a SIGTERM. A cache is only used by the JVM build that wrote it, on the same
# runtime image (the JDK's is refused by the JRE of the same release), so the worker's JVM in that training run is the
# runtime stage's own JRE, copied in from the very image the `worker` stage starts from (same tag, checked by a test).
# Stage `worker` (the default, last) is the application on a JRE-only base, as a numeric non-root user, with the cache.
# A CI that has already run `./mvnw package` may build src/main/docker/Dockerfile.jvm instead: the same runtime stage,
# without a cache (the host's JVM cannot train one for the image's).
####
FROM eclipse-temurin:25.0.3_9-jdk@sha256:c42fecf62f32725c65cfea284c012526d6fb31cc78123c740ebdc1cfd2dced12 AS build
WORKDIR /build
# The runtime stage's JRE, to train the AOT cache on (see above).
COPY --from=eclipse-temurin:25.0.3_9-jre@sha256:a214efa3200af4b657e41935799aa12d7aee3336fdb42eb505a0948f6ecdd983 /opt/java/openjdk /opt/runtime-jre
# Least to most often changed.
COPY mvnw pom.xml ./
COPY .mvn/ .mvn/
COPY src/ src/
RUN --mount=type=cache,target=/cache/m2 \
    MAVEN_USER_HOME=/cache/m2 ./mvnw -B -q -Dmaven.repo.local=/cache/m2/repository \
        package -Paot -DskipTests -Dspotless.check.skip=true -Daot.java=/opt/runtime-jre/bin/java

# The gateway simulator (src/testing/java/io/imageworker/testing/gateway) needs only what the worker itself runs on:
# Vert.x, Jackson and metadata-extractor, from the worker's own dependency folder.
FROM eclipse-temurin:25.0.3_9-jre@sha256:a214efa3200af4b657e41935799aa12d7aee3336fdb42eb505a0948f6ecdd983 AS gateway-simulator
COPY --from=build --chown=185 /build/target/quarkus-app/lib/main/ /deployments/lib/main/
COPY --from=build --chown=185 /build/target/test-classes/io/imageworker/testing/gateway/ /deployments/simulator/io/imageworker/testing/gateway/
USER 185
EXPOSE 8090 8091
ENTRYPOINT ["java", "-cp", "/deployments/simulator:/deployments/lib/main/*", "io.imageworker.testing.gateway.GatewaySimulator"]
CMD ["--host", "0.0.0.0", "--port", "8090", "--files-port", "8091"]

FROM eclipse-temurin:25.0.3_9-jre@sha256:a214efa3200af4b657e41935799aa12d7aee3336fdb42eb505a0948f6ecdd983 AS worker
ENV LANGUAGE='en_US:en'
# uid 185 as in the Red Hat runtime images this one replaces (a volume or a chart may count on it), group root.
RUN useradd --system --uid 185 --gid 0 --home-dir /deployments --no-create-home worker
# Four layers, least to most often changed, so an application change re-uses the dependency layer; the AOT cache
# (app/image-worker.aot) changes with the application, in its layer.
COPY --from=build --chown=185 /build/target/quarkus-app/lib/ /deployments/lib/
COPY --from=build --chown=185 /build/target/quarkus-app/*.jar /deployments/
COPY --from=build --chown=185 /build/target/quarkus-app/app/ /deployments/app/
COPY --from=build --chown=185 /build/target/quarkus-app/quarkus/ /deployments/quarkus/
COPY --from=build --chown=185 --chmod=755 /build/src/main/docker/run-java.sh /opt/jboss/container/java/run/run-java.sh
# Health (/q/health/live, /q/health/ready, /q/health/started), Prometheus metrics (/q/metrics), /asyncapi/.
EXPOSE 8080
# Numeric, non-root: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 185
# run-java.sh (src/main/docker) sizes the heap from the container memory limit (JAVA_MAX_MEM_RATIO, a percentage), adds
# the AOT cache and appends JAVA_OPTS_APPEND, as the Red Hat runtime images' script of the same path did: the chart,
# compose and the Jib image (still on that base, see docs/cold-start.md) configure and start both the same way. If
# you override JAVA_OPTS_APPEND, keep the two flags below.
ENV JAVA_OPTS_APPEND="-Dquarkus.http.host=0.0.0.0 -Djava.util.logging.manager=org.jboss.logmanager.LogManager"
ENV JAVA_APP_JAR="/deployments/quarkus-run.jar"
ENTRYPOINT [ "/opt/jboss/container/java/run/run-java.sh" ]
