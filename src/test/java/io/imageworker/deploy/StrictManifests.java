package io.imageworker.deploy;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRuleSpec;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads Kubernetes manifests into fabric8's Kubernetes model, strictly. fabric8's classes keep every field they do not
 * know in {@code additionalProperties} (forward compatibility for a client), so a misspelt field such as
 * {@code readinesProbe} would be read without a word; here that catch-all is switched off and an unknown field, a
 * string where the API wants a number (or the reverse), or a kind nobody expects fails the read, as the API server
 * would refuse the object.
 */
final class StrictManifests {

    /** The kinds the chart and {@code deploy/} may produce, by {@code apiVersion/kind}. */
    private static final Map<String, Class<?>> KINDS = Map.ofEntries(
            Map.entry("v1/ConfigMap", ConfigMap.class),
            Map.entry("v1/Secret", Secret.class),
            Map.entry("v1/Service", Service.class),
            Map.entry("v1/ServiceAccount", ServiceAccount.class),
            Map.entry("v1/Pod", Pod.class),
            Map.entry("apps/v1/Deployment", Deployment.class),
            Map.entry("batch/v1/Job", Job.class),
            Map.entry("autoscaling/v2/HorizontalPodAutoscaler", HorizontalPodAutoscaler.class),
            Map.entry("policy/v1/PodDisruptionBudget", PodDisruptionBudget.class),
            Map.entry("networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class),
            Map.entry("monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor.class),
            Map.entry("keda.sh/v1alpha1/ScaledObject", ScaledObject.class),
            Map.entry("kafka.strimzi.io/v1beta2/KafkaTopic", KafkaTopic.class));

    private static final YAMLMapper YAML = YAMLMapper.builder().build();

    private static final JsonMapper STRICT = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .addModule(new SimpleModule("no-catch-all").setDeserializerModifier(new NoCatchAll()))
            .build();

    static {
        // ConfigMap data, labels, annotations and env values are strings: an unquoted 8080 or true is refused.
        for (CoercionInputShape shape :
                List.of(CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean)) {
            STRICT.coercionConfigFor(LogicalType.Textual).setCoercion(shape, CoercionAction.Fail);
        }
    }

    private StrictManifests() {}

    /** Every document of a multi-document YAML stream (empty documents skipped), each read as its kind's model. */
    static List<Object> read(String yaml) {
        List<Object> manifests = new ArrayList<>();
        for (JsonNode document : documents(yaml)) {
            manifests.add(read(document));
        }
        return manifests;
    }

    /** One manifest, read as its kind's model. */
    static Object read(JsonNode document) {
        String key = document.path("apiVersion").asText() + "/"
                + document.path("kind").asText();
        Class<?> type = KINDS.get(key);
        if (type == null) {
            throw new IllegalArgumentException("no model for " + key + ": add it to StrictManifests.KINDS");
        }
        return as(document, type);
    }

    /** A tree read strictly as {@code type}. */
    static <T> T as(JsonNode tree, Class<T> type) {
        try {
            return STRICT.treeToValue(tree, type);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a valid " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /** The spec of a Prometheus rules file ({@code groups: [...]}), read strictly. */
    static PrometheusRuleSpec rules(String yaml) {
        return as(documents(yaml).get(0), PrometheusRuleSpec.class);
    }

    /** The non-empty documents of a YAML stream, as trees. */
    static List<JsonNode> documents(String yaml) {
        try {
            List<JsonNode> documents = new ArrayList<>();
            for (JsonNode node : YAML.readerFor(JsonNode.class).readValues(yaml).readAll().stream()
                    .map(JsonNode.class::cast)
                    .toList()) {
                if (node != null && !node.isNull() && !node.isMissingNode()) {
                    documents.add(node);
                }
            }
            return documents;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Removes the {@code @JsonAnySetter} catch-all of fabric8's model classes. */
    private static final class NoCatchAll extends BeanDeserializerModifier {
        @Override
        public BeanDeserializerBuilder updateBuilder(
                DeserializationConfig config, BeanDescription description, BeanDeserializerBuilder builder) {
            Class<?> type = description.getBeanClass();
            if (builder.getAnySetter() != null
                    && type.getName().startsWith("io.fabric8.")
                    && type != GenericKubernetesResource.class) {
                builder.setAnySetter(null);
            }
            return builder;
        }
    }

    /**
     * KEDA's {@code ScaledObject}, which has no fabric8 model: the fields of {@code keda.sh/v1alpha1} that a
     * ScaledObject may carry (KEDA 2.x documentation), read as strictly as the rest.
     */
    record ScaledObject(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {
        record Spec(
                ScaleTargetRef scaleTargetRef,
                Integer pollingInterval,
                Integer cooldownPeriod,
                Integer initialCooldownPeriod,
                Integer idleReplicaCount,
                Integer minReplicaCount,
                Integer maxReplicaCount,
                JsonNode fallback,
                JsonNode advanced,
                List<Trigger> triggers) {}

        record ScaleTargetRef(String apiVersion, String kind, String name, String envSourceContainerName) {}

        record Trigger(
                String type,
                String name,
                String metricType,
                Boolean useCachedMetrics,
                Map<String, String> metadata,
                AuthenticationRef authenticationRef) {}

        record AuthenticationRef(String name, String kind) {}
    }

    /**
     * Strimzi's {@code KafkaTopic}, which has no fabric8 model: the fields of {@code kafka.strimzi.io/v1beta2}'s spec
     * (Strimzi's API reference, {@code KafkaTopicSpec}), read as strictly as the rest.
     */
    record KafkaTopic(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {
        record Spec(String topicName, Integer partitions, Integer replicas, Map<String, Object> config) {}
    }
}
