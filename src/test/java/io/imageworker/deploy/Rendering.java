package io.imageworker.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/** The manifests of one rendering (of the chart, or of {@code deploy/}), read strictly, with what tests ask of them. */
record Rendering(List<Object> manifests) {

    /** Where a variable of the worker's environment comes from. */
    enum Source {
        CONFIG_MAP,
        SECRET,
        LITERAL,
        REFERENCE
    }

    /** One variable of the worker's environment: its value when known (a Secret outside the rendering has none). */
    record Variable(String value, Source source) {}

    <T> Stream<T> all(Class<T> kind) {
        return manifests.stream().filter(kind::isInstance).map(kind::cast);
    }

    <T> Optional<T> find(Class<T> kind) {
        List<T> found = all(kind).toList();
        if (found.size() > 1) {
            throw new AssertionError("more than one " + kind.getSimpleName());
        }
        return found.stream().findFirst();
    }

    <T> T one(Class<T> kind) {
        return find(kind).orElseThrow(() -> new AssertionError("no " + kind.getSimpleName() + " rendered"));
    }

    Deployment deployment() {
        return one(Deployment.class);
    }

    /** The worker's container. */
    Container worker() {
        List<Container> containers =
                deployment().getSpec().getTemplate().getSpec().getContainers();
        if (containers.size() != 1) {
            throw new AssertionError("expected one container, got " + containers.size());
        }
        return containers.get(0);
    }

    <T extends HasMetadata> Optional<T> named(Class<T> kind, String name) {
        return all(kind).filter(m -> m.getMetadata().getName().equals(name)).findFirst();
    }

    /**
     * The worker container's environment as Kubernetes builds it: {@code envFrom} sources in order, then {@code env}
     * entries, each later one winning. A ConfigMap must be part of the rendering; a Secret may come from outside it
     * (then its keys are unknown here).
     */
    Map<String, Variable> environment() {
        Map<String, Variable> environment = new LinkedHashMap<>();
        Container worker = worker();
        for (EnvFromSource from : Optional.ofNullable(worker.getEnvFrom()).orElse(List.of())) {
            if (from.getConfigMapRef() != null) {
                String name = from.getConfigMapRef().getName();
                ConfigMap map = named(ConfigMap.class, name)
                        .orElseThrow(() -> new AssertionError("envFrom names ConfigMap " + name + ", not rendered"));
                map.getData().forEach((k, v) -> environment.put(k, new Variable(v, Source.CONFIG_MAP)));
            }
            if (from.getSecretRef() != null) {
                named(Secret.class, from.getSecretRef().getName()).ifPresent(secret -> secretValues(secret)
                        .forEach((k, v) -> environment.put(k, new Variable(v, Source.SECRET))));
            }
        }
        for (EnvVar variable : Optional.ofNullable(worker.getEnv()).orElse(List.of())) {
            environment.put(
                    variable.getName(),
                    variable.getValueFrom() == null
                            ? new Variable(variable.getValue(), Source.LITERAL)
                            : new Variable(null, Source.REFERENCE));
        }
        return environment;
    }

    /** A Secret's keys and decoded values ({@code data} is base64, {@code stringData} plain). */
    static Map<String, String> secretValues(Secret secret) {
        Map<String, String> values = new LinkedHashMap<>();
        Optional.ofNullable(secret.getData())
                .orElse(Map.of())
                .forEach((k, v) -> values.put(k, new String(Base64.getDecoder().decode(v))));
        Optional.ofNullable(secret.getStringData()).orElse(Map.of()).forEach(values::put);
        return values;
    }
}
