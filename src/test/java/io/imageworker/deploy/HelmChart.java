package io.imageworker.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * The chart under {@code helm/image-worker}, rendered and linted with Helm's own library (helm-java), so no helm
 * binary is needed.
 */
final class HelmChart {

    static final Path DIRECTORY = Path.of("helm", "image-worker");
    static final String RELEASE = "image-worker";
    static final String NAMESPACE = "image-worker";
    /** The oldest Kubernetes the chart declares (Chart.yaml kubeVersion); helm-java's default is older still. */
    static final String KUBE_VERSION = "1.23.0";

    private static final YAMLMapper YAML = new YAMLMapper();

    private HelmChart() {}

    /** The values files chart-testing and this test render: {@code ci/*.yaml}. */
    static List<Path> ciValues() {
        try (Stream<Path> files = Files.list(DIRECTORY.resolve("ci"))) {
            return files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code helm template} with a values file (or none) and {@code --set} values, strictly read. */
    static Rendering render(Path values, Map<String, ?> sets) {
        return new Rendering(StrictManifests.read(template(values, sets)));
    }

    /**
     * {@code helm template} output, not yet read. Rendered once per values file and set of values in this JVM: many
     * tests read the same rendering (every check of a ci values file), and a rendering is a run of Helm's Go library.
     * A refusal is not kept (it is thrown again each time).
     */
    static String template(Path values, Map<String, ?> sets) {
        return RENDERED.computeIfAbsent(
                new Inputs(values, Collections.unmodifiableMap(new HashMap<>(sets))), inputs -> rendered(values, sets));
    }

    /** What a rendering depends on besides the chart. */
    private record Inputs(Path values, Map<String, ?> sets) {}

    private static final Map<Inputs, String> RENDERED = new ConcurrentHashMap<>();

    private static String rendered(Path values, Map<String, ?> sets) {
        TemplateCommand command = new Helm(DIRECTORY)
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION);
        if (values != null) {
            command.withValuesFile(values);
        }
        sets.forEach(command::set);
        return command.call();
    }

    /**
     * The release's NOTES, as {@code helm install} prints them after installing: a client-only dry run (no cluster),
     * whose output ends with them. {@code helm template} leaves them out.
     */
    static String notes(Path values, Map<String, ?> sets) {
        InstallCommand command = new Helm(DIRECTORY)
                .install()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION)
                .clientOnly()
                .dryRun();
        if (values != null) {
            command.withValuesFile(values);
        }
        sets.forEach(command::set);
        String output = command.call().getOutput();
        int notes = output.indexOf("NOTES:");
        if (notes < 0) {
            throw new AssertionError("no NOTES in the install's output:\n" + output);
        }
        return output.substring(notes);
    }

    /** The message Helm refuses to render with, or an assertion error when it renders. */
    static String refusal(Path values, Map<String, ?> sets) {
        try {
            template(values, sets);
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        throw new AssertionError("rendered, but should have been refused: " + sets);
    }

    /**
     * {@code helm lint --strict} with a values file. helm-java's lint takes no values, so the chart is copied and the
     * file merged into its {@code values.yaml} as Helm merges values (maps deeply, anything else replaced).
     */
    static LintResult lint(Path values) {
        try {
            Path copy = copy(UnaryOperator.identity());
            ObjectNode merged =
                    (ObjectNode) YAML.readTree(DIRECTORY.resolve("values.yaml").toFile());
            merge(merged, YAML.readTree(values.toFile()));
            YAML.writeValue(copy.resolve("values.yaml").toFile(), merged);
            try {
                return new Helm(copy).lint().strict().call();
            } finally {
                delete(copy);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code helm template} of the release's hooks too, strictly read. helm-java renders the release's manifest only,
     * never its hooks (nor does its dry-run install show them), so the chart is copied with each {@code helm.sh/hook*}
     * annotation renamed {@value #HOOK_PREFIX}{@code *}: the hook renders as a plain manifest that keeps its hook
     * annotations, under that name, for the test to check.
     */
    static Rendering renderWithHooks(Path values, Map<String, ?> sets) {
        Path copy = copy(text -> text.replace("helm.sh/hook", HOOK_PREFIX));
        try {
            TemplateCommand command = new Helm(copy)
                    .template()
                    .withName(RELEASE)
                    .withNamespace(NAMESPACE)
                    .withKubeVersion(KUBE_VERSION)
                    .withValuesFile(values);
            sets.forEach(command::set);
            return new Rendering(StrictManifests.read(command.call()));
        } finally {
            delete(copy);
        }
    }

    /** What {@code helm.sh/hook} is renamed to by {@link #renderWithHooks}. */
    static final String HOOK_PREFIX = "image-worker.test/hook";

    /** A copy of the chart in a temporary directory, every template's text passed through {@code templates}. */
    private static Path copy(UnaryOperator<String> templates) {
        try {
            Path copy = Files.createTempDirectory("chart-copy").resolve(DIRECTORY.getFileName());
            try (Stream<Path> files = Files.walk(DIRECTORY)) {
                for (Path file : files.toList()) {
                    Path target = copy.resolve(DIRECTORY.relativize(file).toString());
                    if (Files.isDirectory(file)) {
                        Files.createDirectories(target);
                    } else if (file.startsWith(DIRECTORY.resolve("templates"))) {
                        Files.writeString(target, templates.apply(Files.readString(file)));
                    } else {
                        Files.copy(file, target);
                    }
                }
            }
            return copy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void delete(Path copy) {
        try (Stream<Path> files = Files.walk(copy.getParent())) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void merge(ObjectNode into, JsonNode from) {
        for (Iterator<Map.Entry<String, JsonNode>> fields = from.fields(); fields.hasNext(); ) {
            Map.Entry<String, JsonNode> field = fields.next();
            JsonNode existing = into.get(field.getKey());
            if (existing instanceof ObjectNode target && field.getValue().isObject()) {
                merge(target, field.getValue());
            } else {
                into.set(field.getKey(), field.getValue());
            }
        }
    }
}
