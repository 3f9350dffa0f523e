package io.imageworker.support;

import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.streams.WriteStream;
import io.vertx.ext.web.client.impl.HttpRequestImpl;
import io.vertx.ext.web.client.impl.WebClientInternal;
import io.vertx.ext.web.codec.BodyCodec;
import io.vertx.ext.web.codec.spi.BodyStream;
import io.vertx.mutiny.ext.web.client.WebClient;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.LongConsumer;

/**
 * A response body read into one byte array of exactly its size, never more than a cap, for the Web Client: one
 * instance per request ({@code request.as(body.codec())}).
 *
 * <ul>
 *   <li><b>Memory.</b> With a {@code Content-Length}, the array is allocated once at that size and the chunks are
 *       copied into it as they arrive: a 2.7 MB answer costs 2.7 MB, not the 2 to 3 times that a growing buffer and
 *       a final copy cost. Without one, the chunks are kept and gathered once at the end.
 *   <li><b>A cap.</b> When a body grows past {@code maxBytes}, the write fails, which makes the Web Client reset the
 *       connection: the rest is never read, whatever the other side sends.
 *   <li><b>Admission.</b> No byte of the body is read before its {@link Admission} lets it (the memory budget): the
 *       Web Client hands over the response paused, and it stays paused, TCP pushing back on the sender, until the
 *       admission completes. What is read before that is only what Vert.x buffers of a paused response (its inbound
 *       queue, paused past the connection's 64 KiB high-water mark).
 *   <li><b>What happened on the wire.</b> Whether the request went out on a keep-alive connection that had already
 *       carried an exchange, and whether any byte of an answer came back: a reused connection that closes before any
 *       answer is one the server had already closed as idle (see {@link #failedOnReusedConnection()}).
 * </ul>
 *
 * <p>The last two need what only the Web Client's interceptor chain sees (the response headers before the body, the
 * connection a request was sent on); {@link #install(WebClient)} adds that interceptor to a client. It is the Web
 * Client's internal interceptor API ({@code WebClientInternal}), the one its own session and caching features use.
 */
public final class BoundedBody implements BodyCodec<byte[]> {

    /**
     * Whether a body may be read now: asked once, when the answer's headers are in, with its declared length ({@code
     * -1} without one). The response stays paused until the future completes; a failed one fails the response.
     */
    @FunctionalInterface
    public interface Admission {
        /** Reads every body at once. */
        Admission NOW = length -> Future.succeededFuture();

        /** Completes when the body of {@code declaredLength} bytes ({@code -1}: unknown) may be read. */
        Future<Void> admit(long declaredLength);
    }

    private final long maxBytes;
    private final LongConsumer holding;
    private final Admission admission;
    private volatile long declaredLength = -1;
    private volatile boolean answered;
    private volatile boolean reusedConnection;
    /** {@link System#nanoTime()} when the answer's headers came in, and when its body was admitted; 0 until then. */
    private volatile long answeredAt;

    private volatile long admittedAt;
    private volatile HttpClientRequest request;

    /** A body of at most {@code maxBytes}. */
    public BoundedBody(long maxBytes) {
        this(maxBytes, bytes -> {});
    }

    /**
     * A body of at most {@code maxBytes} that tells {@code holding} how many bytes it holds in memory, as soon as it
     * knows (the declared length, before the first byte is read) or as it grows (chunks kept, then gathered: twice
     * what came); for the memory budget. The count only grows; it is called on the event loop and must not block.
     */
    public BoundedBody(long maxBytes, LongConsumer holding) {
        this(maxBytes, Admission.NOW, holding);
    }

    /**
     * A body of at most {@code maxBytes}, read only once {@code admission} lets it, that tells {@code holding} how many
     * bytes it holds (see {@link #BoundedBody(long, LongConsumer)}).
     */
    public BoundedBody(long maxBytes, Admission admission, LongConsumer holding) {
        this.maxBytes = maxBytes;
        this.admission = admission;
        this.holding = holding;
    }

    /** {@link System#nanoTime()} when the answer's headers came in; 0 before. */
    public long answeredAt() {
        return answeredAt;
    }

    /** {@link System#nanoTime()} when the body was admitted and its reading began; 0 before. */
    public long admittedAt() {
        return admittedAt;
    }

    /**
     * Ends the exchange now, whatever it waits for (the answer, its admission, the rest of its body): the request is
     * reset, its connection closed, and the response fails with {@code cause}. Only with the interceptor of {@link
     * #install(WebClient)}; otherwise nothing happens.
     */
    public void abort(Throwable cause) {
        HttpClientRequest sent = request;
        if (sent != null) {
            sent.reset(0, cause);
        }
    }

    /** This codec for the Mutiny Web Client API. */
    public io.vertx.mutiny.ext.web.codec.BodyCodec<byte[]> codec() {
        return io.vertx.mutiny.ext.web.codec.BodyCodec.newInstance(this);
    }

    /**
     * Whether the request was sent on a connection that had carried an earlier exchange, and no byte of an answer came
     * back: the sign of a keep-alive connection the server closed as idle while the request was on its way. The
     * server never read such a request.
     */
    public boolean failedOnReusedConnection() {
        return reusedConnection && !answered;
    }

    /**
     * This body, told the {@code Content-Length} of {@code response}: for a client without the interceptor of
     * {@link #install(WebClient)}, such as a plain {@code HttpClient} that pipes the response into {@link #create}.
     */
    public BoundedBody declaredBy(HttpClientResponse response) {
        answered(response);
        return this;
    }

    /** Adds to {@code client} the interceptor that tells each {@link BoundedBody} what only the wire knows. */
    public static void install(WebClient client) {
        Map<HttpConnection, Boolean> used = Collections.synchronizedMap(new WeakHashMap<>());
        ((WebClientInternal) client.getDelegate()).addInterceptor(context -> {
            if (context.request() instanceof HttpRequestImpl<?> request
                    && request.bodyCodec() instanceof BoundedBody body) {
                switch (context.phase()) {
                    case SEND_REQUEST -> {
                        body.request = context.clientRequest();
                        body.reusedConnection = used.put(context.clientRequest().connection(), Boolean.TRUE) != null;
                    }
                    case RECEIVE_RESPONSE -> body.answered(context.clientResponse());
                    default -> {}
                }
            }
            context.next();
        });
    }

    private void answered(HttpClientResponse response) {
        answered = true;
        answeredAt = System.nanoTime();
        String length = response.getHeader("Content-Length");
        if (length != null) {
            try {
                declaredLength = Long.parseLong(length.trim());
            } catch (NumberFormatException ignored) {
                // A broken header: read the body as if none were given.
            }
        }
    }

    /**
     * The body's stream, once its {@link Admission} lets it be read: until then the Web Client keeps the response
     * paused (it hands it over paused and resumes it only when piping into this stream). Called on the connection's
     * context, and answered on it.
     */
    @Override
    public void create(Handler<AsyncResult<BodyStream<byte[]>>> handler) {
        long declared = declaredLength;
        Future<Void> admitted;
        try {
            admitted = admission.admit(declared);
        } catch (RuntimeException e) {
            admitted = Future.failedFuture(e);
        }
        if (admitted.isComplete()) {
            open(admitted, declared, handler);
            return;
        }
        Context context = Vertx.currentContext();
        admitted.onComplete(result -> {
            if (context == null) {
                open(result, declared, handler);
            } else {
                context.runOnContext(ignored -> open(result, declared, handler));
            }
        });
    }

    private void open(AsyncResult<Void> admitted, long declared, Handler<AsyncResult<BodyStream<byte[]>>> handler) {
        if (admitted.failed()) {
            handler.handle(Future.failedFuture(admitted.cause()));
            return;
        }
        admittedAt = System.nanoTime();
        handler.handle(Future.succeededFuture(new Stream(declared)));
    }

    /** Thrown into the response future when a body is larger than the cap. */
    public static final class BodyTooLargeException extends RuntimeException {
        BodyTooLargeException(long maxBytes) {
            super("body larger than " + maxBytes + " bytes, cut off", null, false, false);
        }
    }

    private final class Stream implements BodyStream<byte[]> {
        private final Promise<byte[]> result = Promise.promise();
        private byte[] exact;
        private int written;
        private List<Buffer> chunks;
        private long received;

        Stream(long declared) {
            if (declared >= 0 && declared <= maxBytes) {
                holding.accept(declared);
                exact = new byte[(int) declared];
            } else {
                chunks = new ArrayList<>();
            }
        }

        @Override
        public Future<byte[]> result() {
            return result.future();
        }

        @Override
        public void handle(Throwable failure) {
            result.tryFail(failure);
        }

        @Override
        public Future<Void> write(Buffer data) {
            int length = data.length();
            if (received + length > maxBytes) {
                BodyTooLargeException tooLarge = new BodyTooLargeException(maxBytes);
                result.tryFail(tooLarge);
                return Future.failedFuture(tooLarge);
            }
            received += length;
            if (exact != null && written + length <= exact.length) {
                data.getBytes(0, length, exact, written);
                written += length;
            } else {
                if (exact != null) {
                    // More than the declared length: keep what came, go on as without a length.
                    chunks = new ArrayList<>(List.of(Buffer.buffer(Arrays.copyOf(exact, written))));
                    exact = null;
                }
                chunks.add(data);
                // The chunks, then the array they are gathered into.
                holding.accept(2 * received);
            }
            return Future.succeededFuture();
        }

        @Override
        public void write(Buffer data, Handler<AsyncResult<Void>> handler) {
            Future<Void> written = write(data);
            if (handler != null) {
                handler.handle(written);
            }
        }

        @Override
        public void end(Handler<AsyncResult<Void>> handler) {
            result.tryComplete(exact != null ? whole(exact, written) : gathered());
            if (handler != null) {
                handler.handle(Future.succeededFuture());
            }
        }

        private byte[] whole(byte[] array, int length) {
            return length == array.length ? array : Arrays.copyOf(array, length);
        }

        private byte[] gathered() {
            byte[] body = new byte[(int) received];
            int position = 0;
            for (Buffer chunk : chunks) {
                chunk.getBytes(0, chunk.length(), body, position);
                position += chunk.length();
            }
            chunks = null;
            return body;
        }

        @Override
        public WriteStream<Buffer> exceptionHandler(Handler<Throwable> handler) {
            return this;
        }

        @Override
        public WriteStream<Buffer> setWriteQueueMaxSize(int maxSize) {
            return this;
        }

        @Override
        public boolean writeQueueFull() {
            return false;
        }

        @Override
        public WriteStream<Buffer> drainHandler(Handler<Void> handler) {
            return this;
        }
    }
}
