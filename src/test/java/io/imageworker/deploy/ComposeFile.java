package io.imageworker.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code docker-compose.yml}, parsed; there is no Docker engine here to run it. */
record ComposeFile(JsonNode root) {

    static final Path PATH = Path.of("docker-compose.yml");

    /** {@code ${NAME}}, {@code ${NAME:-default}}, {@code ${NAME-default}}: Compose's interpolation. */
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?}");

    static ComposeFile read() {
        try {
            return new ComposeFile(new YAMLMapper().readTree(PATH.toFile()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    JsonNode service(String name) {
        JsonNode service = root.path("services").path(name);
        if (service.isMissingNode()) {
            throw new AssertionError("no service " + name + " in " + PATH);
        }
        return service;
    }

    /** A service's environment as written (a mapping; Compose also allows a list of NAME=value). */
    Map<String, String> environment(String service) {
        Map<String, String> environment = new LinkedHashMap<>();
        JsonNode node = service(service).path("environment");
        if (node.isArray()) {
            node.forEach(entry -> {
                String[] pair = entry.asText().split("=", 2);
                environment.put(pair[0], pair.length > 1 ? pair[1] : null);
            });
        } else {
            node.fields()
                    .forEachRemaining(
                            e -> environment.put(e.getKey(), e.getValue().asText()));
        }
        return environment;
    }

    /** A value as Compose makes it when none of the variables it names is set: each replaced by its default. */
    static String withDefaults(String value) {
        Matcher matcher = VARIABLE.matcher(value);
        StringBuilder result = new StringBuilder();
        while (matcher.find()) {
            String fallback = matcher.group(2) == null ? "" : matcher.group(2);
            matcher.appendReplacement(result, Matcher.quoteReplacement(fallback));
        }
        matcher.appendTail(result);
        return result.toString();
    }

    /** The variables a value takes from the host's environment. */
    static boolean fromHost(String value) {
        return VARIABLE.matcher(value).find();
    }
}
