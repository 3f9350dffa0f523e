package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.RetrySettings;
import io.imageworker.testing.TestConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What must hold of every way the worker is deployed on Kubernetes (the chart with any values, the plain manifests of
 * {@code deploy/}): the properties the worker's delivery guarantees and its security rest on.
 */
final class WorkerInvariants {

    private WorkerInvariants() {}

    static void check(Rendering rendering) {
        terminationGraceOutlastsTheDrain(rendering);
        gracesCoverACallAndThePollOutlastsTheRebalance(rendering);
        probesAskTheHealthEndpoints(rendering);
        readinessOutlastsTheChecksItRuns(rendering);
        runsAsNonRootOnAReadOnlyRoot(
                rendering.deployment().getSpec().getTemplate().getSpec());
        keysComeOnlyFromSecrets(rendering);
        selectorsFindThePods(rendering);
        everyVariableIsOneTheWorkerReads(rendering);
    }

    /** A kill during the drain abandons gateway calls already billed: the pod must outlive the shutdown grace. */
    static void terminationGraceOutlastsTheDrain(Rendering rendering) {
        Duration drain = WorkerEnvironment.duration(
                rendering.environment().get("IMAGE_WORKER_SHUTDOWN_GRACE").value());
        Long termination =
                rendering.deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        assertThat(termination)
                .as("terminationGracePeriodSeconds against IMAGE_WORKER_SHUTDOWN_GRACE %s", drain)
                .isNotNull()
                .isGreaterThan(drain.toSeconds());
    }

    /**
     * No call is made twice because a pod stops or a rebalance moves its partitions: the shutdown grace and the
     * rebalance grace each cover a whole gateway call, then its store and its publish (the infrastructure patience);
     * and Kafka's poll interval outlasts the rebalance grace by 60 s, since the revocation waits inside the poll loop.
     */
    static void gracesCoverACallAndThePollOutlastsTheRebalance(Rendering rendering) {
        Map<String, Rendering.Variable> environment = rendering.environment();
        Rendering.Variable patience = environment.get("IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE");
        Duration call = WorkerEnvironment.duration(
                        environment.get("IMAGE_WORKER_GATEWAY_TIMEOUT").value())
                .plus(
                        patience == null
                                ? TestConfig.settings(RetrySettings.class).infrastructurePatience()
                                : WorkerEnvironment.duration(patience.value()));
        Duration shutdown = WorkerEnvironment.duration(
                environment.get("IMAGE_WORKER_SHUTDOWN_GRACE").value());
        Duration rebalance = WorkerEnvironment.duration(
                environment.get("IMAGE_WORKER_REBALANCE_GRACE").value());
        Duration poll = Duration.ofMillis(Long.parseLong(environment
                .get("MP_MESSAGING_INCOMING_REQUESTS_MAX_POLL_INTERVAL_MS")
                .value()));
        assertThat(shutdown)
                .as("the shutdown grace against a call, its store and its publish")
                .isGreaterThanOrEqualTo(call);
        assertThat(rebalance)
                .as("the rebalance grace against a call, its store and its publish")
                .isGreaterThanOrEqualTo(call);
        assertThat(poll)
                .as("max.poll.interval.ms against the rebalance grace")
                .isGreaterThanOrEqualTo(rebalance.plusSeconds(60));
    }

    /** Startup, liveness and readiness ask Quarkus' health endpoints on the port the worker listens on. */
    static void probesAskTheHealthEndpoints(Rendering rendering) {
        Container worker = rendering.worker();
        String port = rendering.environment().get("QUARKUS_HTTP_PORT").value();
        assertThat(worker.getPorts())
                .extracting(ContainerPort::getName, ContainerPort::getContainerPort)
                .contains(org.assertj.core.groups.Tuple.tuple("http", Integer.valueOf(port)));
        Map<String, Probe> probes = Map.of(
                "/q/health/started", worker.getStartupProbe(),
                "/q/health/live", worker.getLivenessProbe(),
                "/q/health/ready", worker.getReadinessProbe());
        probes.forEach((path, probe) -> {
            assertThat(probe).as("probe on %s", path).isNotNull();
            assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
            assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("http");
        });
    }

    /**
     * The readiness probe's timeout exceeds the store's ping (the one readiness check that calls out), by a second for
     * a busy JVM: otherwise readiness flaps whenever the store is slow. Liveness calls out to nothing.
     */
    static void readinessOutlastsTheChecksItRuns(Rendering rendering) {
        Rendering.Variable configured = rendering.environment().get("IMAGE_WORKER_STORAGE_PING_TIMEOUT");
        Duration ping = configured == null
                ? TestConfig.settings(StorageSettings.class).pingTimeout()
                : WorkerEnvironment.duration(configured.value());
        Integer timeout = rendering.worker().getReadinessProbe().getTimeoutSeconds();
        assertThat(timeout)
                .as("readiness probe timeoutSeconds against the store's ping timeout %s", ping)
                .isNotNull()
                .isGreaterThanOrEqualTo((int) ping.plusSeconds(1).toSeconds());
    }

    /** Non-root (numeric uid in the image, see the Dockerfile test), no privilege escalation, read-only root. */
    static void runsAsNonRootOnAReadOnlyRoot(PodSpec pod) {
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        if (pod.getSecurityContext().getRunAsUser() != null) {
            assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
        }
        for (Container container : pod.getContainers()) {
            assertThat(container.getSecurityContext().getReadOnlyRootFilesystem())
                    .as("%s readOnlyRootFilesystem", container.getName())
                    .isTrue();
            assertThat(container.getSecurityContext().getAllowPrivilegeEscalation())
                    .isFalse();
            assertThat(container.getSecurityContext().getCapabilities().getDrop())
                    .contains("ALL");
            if (container.getSecurityContext().getRunAsNonRoot() != null) {
                assertThat(container.getSecurityContext().getRunAsNonRoot()).isTrue();
            }
        }
    }

    /** The gateway key and the S3 secret come from a Secret: never a ConfigMap, never a literal {@code env} value. */
    static void keysComeOnlyFromSecrets(Rendering rendering) {
        rendering.all(ConfigMap.class).forEach(map -> assertThat(map.getData().keySet())
                .as("ConfigMap %s", map.getMetadata().getName())
                .doesNotContainAnyElementsOf(WorkerEnvironment.SECRETS));
        Map<String, Rendering.Variable> environment = rendering.environment();
        for (String secret : WorkerEnvironment.SECRETS) {
            if (environment.containsKey(secret)) {
                assertThat(environment.get(secret).source())
                        .as(secret)
                        .isIn(Rendering.Source.SECRET, Rendering.Source.REFERENCE);
            }
        }
        assertThat(rendering.worker().getEnvFrom())
                .as("the worker reads a Secret whole")
                .anyMatch(from -> from.getSecretRef() != null);
    }

    /** The Service, the PodDisruptionBudget and the ServiceMonitor select what they are meant to. */
    static void selectorsFindThePods(Rendering rendering) {
        Deployment deployment = rendering.deployment();
        Map<String, String> podLabels =
                deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertThat(podLabels)
                .containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
        Service service = rendering.one(Service.class);
        assertThat(podLabels).containsAllEntriesOf(service.getSpec().getSelector());
        assertThat(service.getSpec().getPorts())
                .extracting(p -> p.getTargetPort().getStrVal())
                .containsOnly("http");
        rendering.find(PodDisruptionBudget.class).ifPresent(pdb -> assertThat(podLabels)
                .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels()));
        rendering.find(ServiceMonitor.class).ifPresent(monitor -> {
            assertThat(service.getMetadata().getLabels())
                    .containsAllEntriesOf(monitor.getSpec().getSelector().getMatchLabels());
            List<String> servicePorts = service.getSpec().getPorts().stream()
                    .map(ServicePort::getName)
                    .toList();
            monitor.getSpec().getEndpoints().forEach(endpoint -> {
                assertThat(servicePorts).contains(endpoint.getPort());
                assertThat(endpoint.getPath()).isEqualTo("/q/metrics");
            });
        });
    }

    /** A misspelt variable name is silently ignored by the worker: every name set must be one it reads. */
    static void everyVariableIsOneTheWorkerReads(Rendering rendering) {
        assertThat(rendering.environment().keySet()).allMatch(WorkerEnvironment::reads, "a name the worker reads");
    }
}
