package io.imageworker.storage;

import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.RequestId;
import io.imageworker.image.ImageFormat;
import java.util.Optional;

/**
 * Every key a request is stored under, built in one place from its validated parts, and the check that each is a key
 * the store may be sent ({@link ObjectAddress#keyRefusal}): its image ({@code <keyPrefix><requestId>.<ext>}, or
 * {@code <keyPrefix><requestId>/<i>.<ext>} for variant {@code i} with {@code count} above 1), its result document
 * ({@code <resultPrefix><requestId>.json}) and its variants' records ({@code <resultPrefix><requestId>/<i>.json}).
 *
 * <p>Validation refuses a request whose keys would not all pass ({@link #refusal}) before any gateway call: an id that
 * only breaks a key once its images are made (the {@code .} of {@code images/./2.png}) would otherwise be billed for
 * calls whose images cannot be stored. The ids {@code .} and {@code ..} are refused whatever the count: they are no
 * name in a path, whoever resolves one.
 *
 * <p>Where a request's id is unique only within its producer ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}), each key
 * is built from its stored name, {@code <producer>/<requestId>} ({@link ImageRequest#storageId()}), instead of its id:
 * {@code <keyPrefix><producer>/<requestId>.<ext>}, {@code <resultPrefix><producer>/<requestId>.json}, and so on.
 */
public final class StorageKeys {

    /** The formats an image is stored as: each gives its key an extension of its own. */
    private static final ImageFormat[] STORED = {ImageFormat.PNG, ImageFormat.JPEG, ImageFormat.WEBP};

    private StorageKeys() {}

    /**
     * Whether {@code name} is a name a request may be stored under: a {@code requestId} that follows the contract's
     * rule, or {@code <producer>/<requestId>}, both following theirs ({@link ImageRequest#storageId()}).
     */
    public static boolean isStoredName(String name) {
        if (name == null) {
            return false;
        }
        int slash = name.indexOf('/');
        if (slash < 0) {
            return RequestId.isValid(name);
        }
        String producer = name.substring(0, slash);
        return ImageRequest.PRODUCER.matcher(producer).matches()
                && !producer.equals(".")
                && !producer.equals("..")
                && RequestId.isValid(name.substring(slash + 1));
    }

    /** The key of variant {@code variant} (from 1) of a request with {@code count} variants, stored as {@code format}. */
    public static String imageKey(String keyPrefix, String requestId, int count, int variant, ImageFormat format) {
        String name = count > 1 ? requestId + "/" + variant : requestId;
        return keyPrefix + name + format.extension();
    }

    /** The key of a request's result document under {@code resultPrefix}. */
    public static String resultKey(String resultPrefix, String requestId) {
        return resultPrefix + requestId + ".json";
    }

    /** Where the records of a request's variants live: a folder no other request's records can be in. */
    public static String variantsPrefix(String resultPrefix, String requestId) {
        return resultPrefix + requestId + "/";
    }

    /** The key of the record of variant {@code variant} of a request. */
    public static String variantRecordKey(String resultPrefix, String requestId, int variant) {
        return variantsPrefix(resultPrefix, requestId) + variant + ".json";
    }

    /**
     * Why a request of {@code requestId} (already following the contract's rule) with {@code count} variants, stored
     * under {@code keyPrefix} and recorded under {@code resultPrefix}, cannot be stored, or empty when every key it may
     * write passes {@link ObjectAddress#keyRefusal}: its id is {@code .} or {@code ..}, or one of its keys is refused
     * (the message names the first).
     */
    public static Optional<String> refusal(String keyPrefix, String resultPrefix, String requestId, int count) {
        return refusal(keyPrefix, resultPrefix, null, requestId, count);
    }

    /**
     * {@link #refusal(String, String, String, int)} of a request whose id is unique within {@code scope} (its
     * producer; null: none), whose keys are built from {@code <scope>/<requestId>}.
     */
    public static Optional<String> refusal(
            String keyPrefix, String resultPrefix, String scope, String requestId, int count) {
        if (requestId.equals(".") || requestId.equals("..")) {
            return Optional.of("requestId must not be '" + requestId + "': it becomes a segment of storage keys");
        }
        if (scope != null && (scope.equals(".") || scope.equals(".."))) {
            return Optional.of("producer must not be '" + scope + "': it becomes a segment of storage keys");
        }
        return keysRefusal(keyPrefix, resultPrefix, ImageRequest.scopedId(scope, requestId), count);
    }

    private static Optional<String> keysRefusal(String keyPrefix, String resultPrefix, String requestId, int count) {
        for (int variant = 1; variant <= count; variant++) {
            for (ImageFormat format : STORED) {
                Optional<String> refused = refused(imageKey(keyPrefix, requestId, count, variant, format));
                if (refused.isPresent()) {
                    return refused;
                }
            }
            if (count > 1) {
                Optional<String> refused = refused(variantRecordKey(resultPrefix, requestId, variant));
                if (refused.isPresent()) {
                    return refused;
                }
            }
        }
        return refused(resultKey(resultPrefix, requestId));
    }

    private static Optional<String> refused(String key) {
        return ObjectAddress.keyRefusal(key)
                .map(reason -> "requestId and output.keyPrefix make a storage key the store must not be sent: '"
                        + bounded(key) + "' " + reason);
    }

    /** A key in a refusal, bounded: the message travels back in an event. */
    private static String bounded(String key) {
        return key.length() <= 160 ? key : key.substring(0, 160) + "...";
    }
}
