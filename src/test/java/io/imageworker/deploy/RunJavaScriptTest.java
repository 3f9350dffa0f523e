package io.imageworker.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image's entrypoint, {@code src/main/docker/run-java.sh}, run with a stand-in {@code java} that prints the
 * command line it was given: the AOT cache is passed when the image has it and left out when not (a JVM without
 * one must not be told of one), the heap share and the appended options as the Red Hat images' script took them.
 */
class RunJavaScriptTest {

    private static final Path SCRIPT = Path.of("src/main/docker/run-java.sh");

    @TempDir
    Path dir;

    @Test
    void startsWithTheCacheWhenTheImageHasOne() throws Exception {
        Path cache = Files.writeString(dir.resolve("image-worker.aot"), "a cache");

        List<String> command = run(Map.of(
                "JAVA_AOT_CACHE", cache.toString(),
                "JAVA_MAX_MEM_RATIO", "75",
                "JAVA_OPTS_APPEND", "-Dquarkus.http.host=0.0.0.0 -XX:ActiveProcessorCount=2",
                "JAVA_APP_JAR", "/deployments/quarkus-run.jar"));

        assertThat(command)
                .containsExactly(
                        "-XX:MaxRAMPercentage=75",
                        "-XX:+UseParallelGC",
                        "-XX:+ExitOnOutOfMemoryError",
                        "-XX:AOTCache=" + cache,
                        "-Dquarkus.http.host=0.0.0.0",
                        "-XX:ActiveProcessorCount=2",
                        "-jar",
                        "/deployments/quarkus-run.jar");
    }

    @Test
    void startsWithoutACacheWhenThereIsNoneOrItIsSwitchedOff() throws Exception {
        Path cache = Files.writeString(dir.resolve("image-worker.aot"), "a cache");

        assertThat(run(Map.of("JAVA_AOT_CACHE", dir.resolve("none.aot").toString())))
                .noneMatch(option -> option.startsWith("-XX:AOTCache"))
                .startsWith("-XX:MaxRAMPercentage=80")
                .endsWith("-jar", "/deployments/quarkus-run.jar");
        assertThat(run(Map.of("JAVA_AOT_CACHE", ""))).noneMatch(option -> option.startsWith("-XX:AOTCache"));
        assertThat(cache).exists();
    }

    /**
     * The chart writes the JVM option variables in every pod, empty unless given (no envFrom source may set them): an
     * empty one reaches the JVM unset, since the JVM prints "Picked up ..." for any value, empty or not; one with
     * options reaches it as it is.
     */
    @Test
    void anEmptyJvmOptionsVariableIsUnsetAndAFullOneKept() throws Exception {
        String report = "printf '%s|%s\\n' \"${JAVA_TOOL_OPTIONS-unset}\" \"${JDK_JAVA_OPTIONS-unset}\"";

        assertThat(run(Map.of("JAVA_TOOL_OPTIONS", "", "JDK_JAVA_OPTIONS", ""), report))
                .containsExactly("unset|unset");
        assertThat(run(Map.of("JAVA_TOOL_OPTIONS", "-Xss1m", "JDK_JAVA_OPTIONS", ""), report))
                .containsExactly("-Xss1m|unset");
        assertThat(run(Map.of(), report)).containsExactly("unset|unset");
    }

    /** The arguments {@code java} got from the script, with {@code environment}. */
    private List<String> run(Map<String, String> environment) throws IOException, InterruptedException {
        return run(environment, "for a in \"$@\"; do printf '%s\\n' \"$a\"; done");
    }

    /** What a stand-in {@code java} running {@code body} printed when the script started it with {@code environment}. */
    private List<String> run(Map<String, String> environment, String body) throws IOException, InterruptedException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path java = bin.resolve("java");
        Files.writeString(java, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        ProcessBuilder builder = new ProcessBuilder("/bin/sh", SCRIPT.toString()).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().put("PATH", bin + ":/usr/bin:/bin");
        builder.environment().putAll(environment);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output.lines().toList();
    }
}
