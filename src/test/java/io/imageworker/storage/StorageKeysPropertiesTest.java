package io.imageworker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Operation;
import io.imageworker.contract.RequestId;
import io.imageworker.image.ImageFormat;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * No two requests ever map to one object: every key a request can write (its image or its variants' images, its
 * result document, its variants' records) is a key no other {@code requestId} can write, under the same prefixes and
 * even when the image prefix and the result prefix are one. (Named {@code *Test} so that the build's one test suffix
 * picks it up.)
 */
class StorageKeysPropertiesTest {

    private static final String ALPHABET = "ABCXYZabcxyz0123456789._:-";
    private static final List<ImageFormat> FORMATS = List.of(ImageFormat.PNG, ImageFormat.JPEG, ImageFormat.WEBP);

    @Property(tries = 5000)
    void twoRequestsNeverShareAKey(@ForAll("requestPairs") List<Request> pair, @ForAll("prefixes") String prefix) {
        Request first = pair.get(0);
        Request second = pair.get(1);
        Set<String> firstKeys = keys(first, prefix, prefix);

        assertThat(keys(second, prefix, prefix)).doesNotContainAnyElementsOf(firstKeys);
        assertThat(keys(second, prefix, "results/")).doesNotContainAnyElementsOf(keys(first, prefix, "results/"));
    }

    @Property(tries = 1000)
    void aRequestsOwnKeysAreAllDistinct(@ForAll("requests") Request request, @ForAll("prefixes") String prefix) {
        int expected = request.count() * FORMATS.size() + 1 + (request.count() > 1 ? request.count() : 0);

        assertThat(keys(request, prefix, prefix)).hasSize(expected);
    }

    /**
     * An id the validation lets through ({@link StorageKeys#refusal} empty) makes only keys the store may be sent, with
     * any count and any allowed prefix: nothing is refused only once its calls are billed. Ids of dots alone are the
     * most likely to break that, so half the ids are.
     */
    @Property(tries = 3000)
    void everyKeyOfAnIdTheValidationAcceptsPassesTheStoresCheck(
            @ForAll("dottedRequests") Request request, @ForAll("prefixes") String prefix) {
        boolean accepted = StorageKeys.refusal(prefix, "results/", request.requestId(), request.count())
                .isEmpty();

        assertThat(accepted)
                .as("accepted")
                .isEqualTo(
                        !request.requestId().equals(".") && !request.requestId().equals(".."));
        if (accepted) {
            for (String key : keys(request, prefix, "results/")) {
                assertThat(ObjectAddress.keyRefusal(key)).as(key).isEmpty();
            }
            for (String key : keys(request, prefix, prefix)) {
                assertThat(ObjectAddress.keyRefusal(key)).as(key).isEmpty();
            }
        }
    }

    /** The ids {@code .} and {@code ..}, refused, whatever the count and the prefix. */
    @Example
    void theIdsDotAndDotDotAreRefusedWithAnyCount() {
        for (String id : List.of(".", "..")) {
            for (int count = 1; count <= ImageRequest.MAX_COUNT; count++) {
                assertThat(StorageKeys.refusal("images/", "results/", id, count))
                        .as("%s, count %d", id, count)
                        .contains("requestId must not be '" + id + "': it becomes a segment of storage keys");
            }
        }
        assertThat(StorageKeys.refusal("images/", "results/", "...", 3)).isEmpty();
    }

    /** The case that was found: request {@code X-2}, then {@code X} with {@code count: 3}, in both orders. */
    @Example
    void variantTwoOfXIsNotRequestX2() {
        String single = ImageStorage.key(request("X-2", 1), 1, ImageFormat.PNG);
        String variant = ImageStorage.key(request("X", 3), 2, ImageFormat.PNG);

        assertThat(single).isEqualTo("images/X-2.png");
        assertThat(variant).isEqualTo("images/X/2.png");
        assertThat(keys(new Request("X", 3), "images/", "results/"))
                .doesNotContainAnyElementsOf(keys(new Request("X-2", 1), "images/", "results/"));
    }

    /** One generated request: its id and how many variants it asks for. */
    record Request(String requestId, int count) {}

    @Provide
    Arbitrary<String> prefixes() {
        return Arbitraries.of("", "images/", "p/q/", "team-a.");
    }

    @Provide
    Arbitrary<Request> dottedRequests() {
        Arbitrary<String> dotted =
                Arbitraries.strings().withChars('.').ofMinLength(1).ofMaxLength(4);
        return Combinators.combine(
                        Arbitraries.oneOf(ids(), dotted), Arbitraries.integers().between(1, ImageRequest.MAX_COUNT))
                .as(Request::new);
    }

    @Provide
    Arbitrary<Request> requests() {
        return Combinators.combine(ids(), Arbitraries.integers().between(1, ImageRequest.MAX_COUNT))
                .as(Request::new);
    }

    /**
     * Two requests with different ids, half of them adversarial: the second id is the first with a suffix that a
     * variant key, an extension or a record name could produce ({@code -2}, {@code .png}, {@code .json}, {@code 2}).
     */
    @Provide
    Arbitrary<List<Request>> requestPairs() {
        Arbitrary<String> suffixes =
                Arbitraries.of("-1", "-2", "-8", "1", "2", ".png", ".jpg", ".json", ".1", ":2", "-");
        Arbitrary<List<Request>> related = Combinators.combine(requests(), suffixes, requests())
                .as((first, suffix, second) -> List.of(first, new Request(first.requestId() + suffix, second.count())));
        Arbitrary<List<Request>> independent = requests().list().ofSize(2);
        return Arbitraries.oneOf(related, independent)
                .filter(pair -> !pair.get(0).requestId().equals(pair.get(1).requestId()))
                .filter(pair -> RequestId.isValid(pair.get(1).requestId()));
    }

    private static Arbitrary<String> ids() {
        return Arbitraries.strings()
                .withChars(ALPHABET.toCharArray())
                .ofMinLength(1)
                .ofMaxLength(8);
    }

    /** Every key {@code request} can write with images under {@code keyPrefix} and records under {@code resultPrefix}. */
    private static Set<String> keys(Request generated, String keyPrefix, String resultPrefix) {
        ImageRequest request = request(generated.requestId(), generated.count(), keyPrefix);
        Set<String> keys = new HashSet<>();
        for (int variant = 1; variant <= generated.count(); variant++) {
            // A redelivery may get another format back from the gateway: every format's key is the request's.
            for (ImageFormat format : FORMATS) {
                keys.add(ImageStorage.key(request, variant, format));
            }
            if (generated.count() > 1) {
                keys.add(ImageStore.variantRecordKey(resultPrefix, generated.requestId(), variant));
            }
        }
        keys.add(ImageStore.resultKey(resultPrefix, generated.requestId()));
        return keys;
    }

    @Example
    void aRequestWhoseIdIsUniqueWithinItsProducerIsStoredUnderItsProducersName() {
        ImageRequest request = new ImageRequest(
                "r-1",
                Operation.GENERATE,
                "a cat",
                null,
                null,
                List.of(),
                null,
                "images/",
                null,
                Map.of(),
                2,
                "b",
                "b");

        assertThat(request.storageId()).isEqualTo("b/r-1");
        assertThat(StorageKeys.imageKey("images/", request.storageId(), 2, 1, ImageFormat.PNG))
                .isEqualTo("images/b/r-1/1.png");
        assertThat(StorageKeys.resultKey("results/", request.storageId())).isEqualTo("results/b/r-1.json");
        assertThat(StorageKeys.isStoredName("b/r-1")).isTrue();
        assertThat(StorageKeys.isStoredName("r-1")).isTrue();
        assertThat(StorageKeys.isStoredName("../r-1")).isFalse();
        assertThat(StorageKeys.isStoredName("b/c/r-1")).isFalse();
        assertThat(StorageKeys.isStoredName("b/")).isFalse();
        assertThat(StorageKeys.refusal("images/", "results/", "..", "r-1", 1)).isPresent();
        assertThat(StorageKeys.refusal("images/", "results/", "b", "r-1", 2)).isEmpty();
    }

    private static ImageRequest request(String requestId, int count) {
        return request(requestId, count, "images/");
    }

    private static ImageRequest request(String requestId, int count, String keyPrefix) {
        return new ImageRequest(
                requestId,
                Operation.GENERATE,
                "a cat",
                null,
                null,
                List.of(),
                null,
                keyPrefix,
                null,
                Map.of(),
                count,
                null,
                null);
    }
}
