package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Configuration table of {@code docs/configuration.md} names exactly the settings the worker reads: none misspelt,
 * none missing; the README's short table of the settings that matter gives the required ones, and only settings of
 * that table.
 */
class ConfigurationNamesTest {

    private static final Pattern NAME =
            Pattern.compile("`((?:IMAGE_WORKER|KAFKA|AWS|QUARKUS|JAVA)_[A-Z0-9_]+|_[A-Z0-9_]+)`");

    /**
     * The names the table's rows give (the first column, and alternatives named in the meaning). A cell may abbreviate ({@code IMAGE_WORKER_TOPIC_REQUEST} /
     * {@code _COMPLETED}): a name starting with {@code _} continues a prefix of the cell's first name.
     */
    static Set<String> documented() throws IOException {
        return tableNames(Path.of("docs/configuration.md"), "# Configuration");
    }

    /** The names of the table rows under {@code heading} in {@code document}, up to the next heading. */
    static Set<String> tableNames(Path document, String heading) throws IOException {
        List<String> lines = Files.readAllLines(document);
        int start = lines.indexOf(heading);
        assertThat(start).as("%s in %s", heading, document).isNotNegative();
        Set<String> known = WorkerEnvironment.known();
        Set<String> names = new TreeSet<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("#")) {
                break;
            }
            if (!line.startsWith("| `")) {
                continue;
            }
            for (String text : line.split("\\|")) {
                List<String> cell = new ArrayList<>();
                Matcher matcher = NAME.matcher(text);
                while (matcher.find()) {
                    cell.add(matcher.group(1));
                }
                String full = null;
                for (String name : cell) {
                    if (name.startsWith("_")) {
                        names.add(expand(full, name, known));
                    } else {
                        full = name;
                        names.add(name);
                    }
                }
            }
        }
        return names;
    }

    private static String expand(String first, String suffix, Set<String> known) {
        for (int cut = first.lastIndexOf('_'); cut > 0; cut = first.lastIndexOf('_', cut - 1)) {
            String candidate = first.substring(0, cut) + suffix;
            if (known.contains(candidate)) {
                return candidate;
            }
        }
        return first + suffix;
    }

    @Test
    void everyDocumentedNameIsOneTheWorkerReads() throws IOException {
        assertThat(WorkerEnvironment.known()).containsAll(documented());
    }

    @Test
    void everySettingOfTheWorkerIsDocumented() throws IOException {
        assertThat(documented()).containsAll(WorkerEnvironment.workerConfigNames());
    }

    @Test
    void theReadmeNamesOnlySettingsOfTheFullTable() throws IOException {
        Set<String> readme = tableNames(Path.of("README.md"), "## The settings that matter");

        assertThat(readme).as("the README gives every required setting").containsAll(WorkerEnvironment.REQUIRED);
        assertThat(documented()).containsAll(readme);
    }
}
