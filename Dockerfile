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
# Stage `worker` (the default, last) is the application on a JRE-only base, as a numeric non-root user.
# A CI that has already run `./mvnw package` may build src/main/docker/Dockerfile.jvm instead: the same runtime stage.
####
FROM eclipse-temurin:17-jdk AS build
WORKDIR /build
# Least to most often changed.
COPY mvnw pom.xml lombok.config ./
COPY .mvn/ .mvn/
COPY src/ src/
RUN --mount=type=cache,target=/cache/m2 \
    MAVEN_USER_HOME=/cache/m2 ./mvnw -B -q -Dmaven.repo.local=/cache/m2/repository \
        package -DskipTests -Dspotless.check.skip=true

# The gateway simulator (src/testing/java/io/imageworker/testing/gateway) needs only what the worker itself runs on:
# Vert.x, Jackson and metadata-extractor, from the worker's own dependency folder.
FROM registry.access.redhat.com/ubi9/openjdk-17-runtime:1.24 AS gateway-simulator
COPY --from=build --chown=185 /build/target/quarkus-app/lib/main/ /deployments/lib/main/
COPY --from=build --chown=185 /build/target/test-classes/io/imageworker/testing/gateway/ /deployments/simulator/io/imageworker/testing/gateway/
USER 185
EXPOSE 8090 8091
ENTRYPOINT ["java", "-cp", "/deployments/simulator:/deployments/lib/main/*", "io.imageworker.testing.gateway.GatewaySimulator"]
CMD ["--host", "0.0.0.0", "--port", "8090", "--files-port", "8091"]

FROM registry.access.redhat.com/ubi9/openjdk-17-runtime:1.24 AS worker
ENV LANGUAGE='en_US:en'
# Four layers, least to most often changed, so an application change re-uses the dependency layer.
COPY --from=build --chown=185 /build/target/quarkus-app/lib/ /deployments/lib/
COPY --from=build --chown=185 /build/target/quarkus-app/*.jar /deployments/
COPY --from=build --chown=185 /build/target/quarkus-app/app/ /deployments/app/
COPY --from=build --chown=185 /build/target/quarkus-app/quarkus/ /deployments/quarkus/
# Health (/q/health/live, /q/health/ready, /q/health/started), Prometheus metrics (/q/metrics), /asyncapi/.
EXPOSE 8080
# Numeric, non-root: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 185
# The base image's run-java.sh sizes the heap from the container memory limit (JAVA_MAX_MEM_RATIO, a percentage) and
# appends JAVA_OPTS_APPEND. If you override JAVA_OPTS_APPEND, keep the two flags below.
ENV JAVA_OPTS_APPEND="-Dquarkus.http.host=0.0.0.0 -Djava.util.logging.manager=org.jboss.logmanager.LogManager"
ENV JAVA_APP_JAR="/deployments/quarkus-run.jar"
ENTRYPOINT [ "/opt/jboss/container/java/run/run-java.sh" ]
