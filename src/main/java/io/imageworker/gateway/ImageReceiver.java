package io.imageworker.gateway;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.RequestFailure;
import io.imageworker.gateway.ImageDownloader.DownloadException;
import io.imageworker.image.ImageInfo;
import io.imageworker.image.ImageInspector;
import io.imageworker.image.ImageSize;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.support.CpuWork;
import io.imageworker.support.Patience;
import io.imageworker.support.Tracing;
import io.imageworker.support.WorkerMetrics;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Takes the image out of a gateway's answer: the bytes of its {@code b64_json} (already decoded), or a download of
 * its temporary {@code url} at once; then, on the CPU pool, reads what the bytes really are and hashes them. An answer
 * without a usable png, jpeg or webp of a readable size ends the request: {@code INVALID_OUTPUT} ({@code TIMEOUT} when
 * the download ran out of time), as does a {@code url} that the address rules refuse ({@link ImageDownloader}), at
 * once and without a retry: asking the same gateway's URL again would only be refused again. The call was billed either way, so nothing here calls the gateway again. An image of
 * another size than the one sent is kept: the gateway's silent failure is logged, counted, and reported by the event
 * ({@code size.matched=false}).
 */
@ApplicationScoped
public class ImageReceiver {

    private final ImageDownloader downloader;
    private final CpuWork cpu;
    private final Patience patience;
    private final WorkerMetrics metrics;
    private final Tracing tracing;
    private final AnswerSizes sizes;

    ImageReceiver(
            ImageDownloader downloader,
            CpuWork cpu,
            Patience patience,
            WorkerMetrics metrics,
            Tracing tracing,
            AnswerSizes sizes) {
        this.downloader = downloader;
        this.cpu = cpu;
        this.patience = patience;
        this.metrics = metrics;
        this.tracing = tracing;
        this.sizes = sizes;
    }

    /**
     * The checked image of an answer that was sent {@code sent}: its decoded bytes, or a download of its {@code url}
     * held by {@code memory} (the call's lease: admitted the image's estimate before the download starts, then the
     * download's bytes, from the moment their length is known);
     * fails with {@link RequestFailure}.
     */
    public Uni<ReceivedImage> take(
            String requestId, GatewayAnswer.Image answer, ImageSize sent, MemoryBudget.Lease memory) {
        Uni<byte[]> data = answer.bytes() != null
                ? Uni.createFrom().item(answer.bytes())
                // The call's lease holds only the answer's JSON now: the image it points to is admitted first.
                : memory.admit(sizes.estimate(sent.toString()))
                        .chain(() -> download(answer.url(), memory))
                        .invoke(bytes -> {
                            memory.resize(bytes.length);
                            sizes.observe(sent.toString(), bytes.length);
                        });
        return tracing.stage("take image", () -> data.chain(bytes -> cpu.run(() -> checked(bytes))), (span, image) -> {
                    span.setAttribute("image_worker.form", answer.bytes() != null ? "b64_json" : "url");
                    span.setAttribute("image_worker.size", image.size().toString());
                    span.setAttribute("image_worker.bytes", image.bytes().length);
                })
                .invoke(image -> {
                    if (!image.size().equals(sent)) {
                        metrics.sizeMismatch();
                        Log.warnf(
                                "[%s] the gateway returned %s for %s (a silent failure); storing it with matched=false",
                                requestId, image.size(), sent);
                    }
                });
    }

    private Uni<byte[]> download(String url, MemoryBudget.Lease memory) {
        return patience.retry(
                        downloader.download(url, memory::hold),
                        // A timeout already took the whole download time: one attempt. Other transient failures are
                        // free to repeat.
                        error -> error instanceof DownloadException download
                                && download.transientFailure()
                                && !download.timedOut())
                .onFailure(DownloadException.class)
                .transform(error -> new RequestFailure(
                        ((DownloadException) error).timedOut() ? ErrorCode.TIMEOUT : ErrorCode.INVALID_OUTPUT,
                        error.getMessage()));
    }

    private static ReceivedImage checked(byte[] bytes) {
        ImageInfo info = ImageInspector.inspect(bytes);
        if (!info.isUsable() || info.size().isEmpty()) {
            throw new RequestFailure(
                    ErrorCode.INVALID_OUTPUT,
                    "the gateway's answer is not a usable png, jpeg or webp image: "
                            + info.refusal().orElse("size unreadable"));
        }
        return new ReceivedImage(bytes, info, ImageInspector.sha256Hex(bytes));
    }
}
