package io.imageworker.it;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * A headless Chromium and its driver, found on the machine (Debian's {@code chromium} and {@code chromium-driver}; or
 * {@code CHROME_BIN} and {@code CHROMEDRIVER}), never downloaded. Where none is found a test says so and is aborted,
 * unless {@code IMAGE_WORKER_REQUIRE_TEST_TOOLS=true} (CI sets it, {@code .ci/run}, as for promtool), where it fails.
 */
final class Chromium {

    /** The environment variable that makes a missing browser a failure (and a missing promtool: the project's one). */
    static final String REQUIRED = "IMAGE_WORKER_REQUIRE_TEST_TOOLS";

    private Chromium() {}

    /** The browser and its driver, when both are found. */
    record Found(Path browser, Path driver) {}

    static Optional<Found> find() {
        Optional<Path> browser = named(System.getenv("CHROME_BIN"))
                .or(() -> onPath(List.of("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")));
        Optional<Path> driver = named(System.getenv("CHROMEDRIVER")).or(() -> onPath(List.of("chromedriver")));
        return browser.isPresent() && driver.isPresent()
                ? Optional.of(new Found(browser.get(), driver.get()))
                : Optional.empty();
    }

    /** Whether a missing browser fails the test (CI) rather than aborting it. */
    static boolean required() {
        return Boolean.parseBoolean(System.getenv(REQUIRED));
    }

    /** What to say when none is found. */
    static String missing() {
        return "No Chromium and chromedriver found (looked for chromium, chromium-browser, google-chrome and"
                + " chromedriver on the PATH, and CHROME_BIN / CHROMEDRIVER): the console's browser test does not run"
                + " here. On Debian: apt-get install chromium chromium-driver. In CI (" + REQUIRED
                + "=true) this is a failure.";
    }

    /** A headless browser of {@code width} x {@code height}. */
    static ChromeDriver start(Found found, int width, int height) {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(found.browser().toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-dev-shm-usage",
                "--disable-gpu",
                "--disable-extensions",
                "--window-size=" + width + "," + height);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(found.driver().toFile())
                .usingAnyFreePort()
                .build();
        return new ChromeDriver(service, options);
    }

    private static Optional<Path> named(String file) {
        return Optional.ofNullable(file)
                .filter(name -> !name.isBlank())
                .map(Path::of)
                .filter(Files::isExecutable);
    }

    private static Optional<Path> onPath(List<String> names) {
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        return names.stream()
                .flatMap(name -> Stream.of(path.split(File.pathSeparator))
                        .filter(dir -> !dir.isBlank())
                        .map(dir -> Path.of(dir, name)))
                .filter(Files::isExecutable)
                .findFirst();
    }
}
