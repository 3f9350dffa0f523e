package io.imageworker.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Secret;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The plain manifests of {@code deploy/} that {@code kubectl apply -k deploy/} applies, and the example Secret. */
final class KustomizeBase {

    static final Path DIRECTORY = Path.of("deploy");

    private KustomizeBase() {}

    static JsonNode kustomization() {
        return StrictManifests.documents(read(DIRECTORY.resolve("kustomization.yaml")))
                .get(0);
    }

    /** The resources kustomization.yaml lists, read strictly. */
    static Rendering rendering() {
        List<Object> manifests = new ArrayList<>();
        for (JsonNode resource : kustomization().path("resources")) {
            manifests.addAll(StrictManifests.read(read(DIRECTORY.resolve(resource.asText()))));
        }
        return new Rendering(manifests);
    }

    /** secret.example.yaml: what the Secret the Deployment reads holds (created by hand, never applied from here). */
    static Secret exampleSecret() {
        return (Secret) StrictManifests.read(read(DIRECTORY.resolve("secret.example.yaml")))
                .get(0);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
