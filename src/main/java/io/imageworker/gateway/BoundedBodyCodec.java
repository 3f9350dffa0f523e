package io.imageworker.gateway;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.WriteStream;
import io.vertx.ext.web.codec.BodyCodec;
import io.vertx.ext.web.codec.spi.BodyStream;

/**
 * A Web Client body codec that keeps at most {@code maxBytes} of a response in memory. When a body grows past the
 * cap, the write fails, which makes the Web Client reset the connection: the rest is never read, so memory stays
 * bounded by configuration whatever the other side sends.
 */
public final class BoundedBodyCodec implements BodyCodec<Buffer> {

    private final long maxBytes;

    /** A codec that refuses bodies over {@code maxBytes}. */
    public BoundedBodyCodec(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** The codec for the Mutiny Web Client API. */
    @SuppressWarnings("unchecked")
    public static io.vertx.mutiny.ext.web.codec.BodyCodec<Buffer> mutiny(long maxBytes) {
        return io.vertx.mutiny.ext.web.codec.BodyCodec.newInstance(new BoundedBodyCodec(maxBytes));
    }

    @Override
    public void create(Handler<AsyncResult<BodyStream<Buffer>>> handler) {
        handler.handle(Future.succeededFuture(new Stream(maxBytes)));
    }

    /** Thrown into the response future when a body is larger than the cap. */
    public static final class BodyTooLargeException extends RuntimeException {
        BodyTooLargeException(long maxBytes) {
            super("body larger than " + maxBytes + " bytes, cut off", null, false, false);
        }
    }

    private static final class Stream implements BodyStream<Buffer> {
        private final long maxBytes;
        private final Buffer body = Buffer.buffer();
        private final Promise<Buffer> result = Promise.promise();

        Stream(long maxBytes) {
            this.maxBytes = maxBytes;
        }

        @Override
        public Future<Buffer> result() {
            return result.future();
        }

        @Override
        public void handle(Throwable failure) {
            result.tryFail(failure);
        }

        @Override
        public WriteStream<Buffer> exceptionHandler(Handler<Throwable> handler) {
            return this;
        }

        @Override
        public Future<Void> write(Buffer data) {
            if ((long) body.length() + data.length() > maxBytes) {
                BodyTooLargeException tooLarge = new BodyTooLargeException(maxBytes);
                result.tryFail(tooLarge);
                return Future.failedFuture(tooLarge);
            }
            body.appendBuffer(data);
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
            result.tryComplete(body);
            if (handler != null) {
                handler.handle(Future.succeededFuture());
            }
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
