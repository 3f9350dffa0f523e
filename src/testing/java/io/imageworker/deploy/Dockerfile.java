package io.imageworker.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A Dockerfile, as its stages: each {@code FROM} with its name and its instructions (continuations joined). Read by
 * the deployment tests and by the container image's integration test.
 */
public record Dockerfile(List<Stage> stages) {

    public record Stage(String base, String name, List<String> instructions) {
        /** The arguments of the last instruction of this kind, or null. */
        public String last(String keyword) {
            String found = null;
            for (String instruction : instructions) {
                if (instruction.toUpperCase(Locale.ROOT).startsWith(keyword + " ")) {
                    found = instruction.substring(keyword.length() + 1).trim();
                }
            }
            return found;
        }

        /** The arguments of every instruction of this kind, in order. */
        public List<String> all(String keyword) {
            return instructions.stream()
                    .filter(i -> i.toUpperCase(Locale.ROOT).startsWith(keyword + " "))
                    .map(i -> i.substring(keyword.length() + 1).trim())
                    .toList();
        }
    }

    /** Reads the Dockerfile at {@code path}. */
    public static Dockerfile read(Path path) {
        List<String> lines;
        try {
            lines = Files.readAllLines(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> instructions = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : lines) {
            String trimmed = line.strip();
            if (trimmed.startsWith("#") || trimmed.isEmpty() && current.isEmpty()) {
                continue;
            }
            if (trimmed.endsWith("\\")) {
                current.append(trimmed, 0, trimmed.length() - 1).append(' ');
                continue;
            }
            current.append(trimmed);
            instructions.add(current.toString());
            current.setLength(0);
        }
        List<Stage> stages = new ArrayList<>();
        for (String instruction : instructions) {
            if (instruction.toUpperCase(Locale.ROOT).startsWith("FROM ")) {
                String[] words = instruction.split("\\s+");
                String name = words.length >= 4 && words[2].equalsIgnoreCase("AS") ? words[3] : null;
                stages.add(new Stage(words[1], name, new ArrayList<>()));
            } else if (!stages.isEmpty()) {
                stages.get(stages.size() - 1).instructions().add(instruction);
            }
        }
        return new Dockerfile(stages);
    }

    /** The stage named {@code name} ({@code FROM ... AS name}). */
    public Stage stage(String name) {
        return stages.stream()
                .filter(s -> name.equals(s.name()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no stage " + name));
    }

    /** The stage {@code docker build} ends in without a target. */
    public Stage last() {
        return stages.get(stages.size() - 1);
    }
}
