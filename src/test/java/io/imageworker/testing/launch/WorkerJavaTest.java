package io.imageworker.testing.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerJavaTest {

    @TempDir
    Path jvms;

    private Path jdk(String name, String javaVersion) throws IOException {
        Path home = jvms.resolve(name);
        Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(
                home.resolve("release"),
                "IMPLEMENTOR=\"x\"\nJAVA_RUNTIME_VERSION=\"" + javaVersion + "+9\"\nJAVA_VERSION=\"" + javaVersion
                        + "\"\n");
        return home;
    }

    @Test
    void theNewestJdkOfAnAotReleaseBesideTheRunningOneIsTaken() throws IOException {
        Path running = jdk("java-17", "17.0.15");
        jdk("temurin-25", "25.0.3");
        Path newest = jdk("temurin-26", "26.0.1");

        assertThat(WorkerJava.newestBeside(running)).contains(newest);
        assertThat(WorkerJava.release(newest)).contains(26);
    }

    @Test
    void noneIsTakenBelowTheAotReleaseOrWithoutALauncher() throws IOException {
        Path running = jdk("java-17", "17.0.15");
        jdk("java-21", "21.0.4");
        Files.createDirectories(jvms.resolve("temurin-25-no-launcher"));
        Files.writeString(jvms.resolve("temurin-25-no-launcher").resolve("release"), "JAVA_VERSION=\"25\"\n");

        assertThat(WorkerJava.newestBeside(running)).isEmpty();
    }

    @Test
    void aRunningAotReleaseKeepsItsOwnLauncher() throws IOException {
        Path running = jdk("temurin-25", "25.0.3");
        jdk("temurin-25-other", "25.0.1");

        assertThat(WorkerJava.newestBeside(running)).isEmpty();
    }

    @Test
    void aLauncherBesideTheRunningOneStartsFromAnAotCache() throws IOException {
        Path home = jdk("temurin-25", "25.0.3");
        String java = home.resolve("bin").resolve("java").toString();

        assertThat(WorkerJava.releaseOf(java)).isEqualTo(25);
        assertThat(WorkerJava.versionOf(java)).isEqualTo("25.0.3+9");
        assertThat(WorkerClassArchive.aotCache(java)).isTrue();
        assertThat(WorkerClassArchive.aotCache(WorkerJava.current()))
                .isEqualTo(Runtime.version().feature() >= WorkerJava.AOT_CACHE_RELEASE);
    }

    @Test
    void aPathNamesTheLauncherAndCurrentIsThisJvms() {
        assertThat(WorkerJava.choose("/opt/jdk/bin/java")).isEqualTo("/opt/jdk/bin/java");
        assertThat(WorkerJava.choose("current")).isEqualTo(WorkerJava.current());
        assertThat(WorkerJava.choose("")).isEqualTo(WorkerJava.current());
    }
}
