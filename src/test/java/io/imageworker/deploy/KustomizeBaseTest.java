package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code deploy/}, the manifests for a cluster without Helm: read as strictly as the chart's, and as safe. */
class KustomizeBaseTest {

    @Test
    void everyListedResourceExistsAndTheApiWouldAcceptIt() {
        JsonNode kustomization = KustomizeBase.kustomization();
        assertThat(kustomization.path("kind").asText()).isEqualTo("Kustomization");
        kustomization.path("resources").forEach(r -> assertThat(KustomizeBase.DIRECTORY.resolve(r.asText()))
                .isRegularFile());

        Rendering rendering = KustomizeBase.rendering();

        assertThat(rendering.manifests())
                .hasExactlyElementsOfTypes(ServiceAccount.class, ConfigMap.class, Deployment.class, Service.class);
        assertThat(rendering.all(Secret.class))
                .as("the Secret is created by hand, never from a file here")
                .isEmpty();
    }

    @Test
    void holdsWhatTheChartHolds() {
        WorkerInvariants.check(KustomizeBase.rendering());
    }

    @Test
    void theDeploymentReadsTheExampleSecretsName() {
        Secret example = KustomizeBase.exampleSecret();

        assertThat(KustomizeBase.rendering().worker().getEnvFrom())
                .anyMatch(from -> from.getSecretRef() != null
                        && from.getSecretRef()
                                .getName()
                                .equals(example.getMetadata().getName()));
        assertThat(Rendering.secretValues(example)).containsKey("IMAGE_WORKER_GATEWAY_API_KEY");
        assertThat(KustomizeBase.kustomization().path("resources").toString()).doesNotContain("secret");
    }

    @Test
    void theImageKustomizeSetsIsTheDeploymentsImage() {
        JsonNode image = KustomizeBase.kustomization().path("images").get(0);

        assertThat(KustomizeBase.rendering().worker().getImage())
                .isEqualTo(image.path("name").asText());
        assertThat(Path.of("helm/image-worker/Chart.yaml"))
                .content()
                .contains("appVersion: \"" + image.path("newTag").asText() + "\"");
    }
}
