package io.imageworker.processing;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Operation;
import io.imageworker.contract.RequestFailure;
import io.imageworker.gateway.GatewayRequest;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.image.ImageInfo;
import io.imageworker.image.SizeDecision;
import io.imageworker.image.SizePolicy;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.reference.EditInputs;
import io.imageworker.reference.LoadedImage;
import io.imageworker.reference.ReferenceLoader;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides the call a valid request makes: the size to send (the gateway silently makes a wrong picture for a missing
 * or non-pixel size, so an explicit valid {@code WIDTHxHEIGHT} is always sent), and for an edit its inputs, read one
 * after the other and checked ({@link ReferenceLoader}). Nothing is sent before every input is loaded and checked; an
 * unusable size is refused before any reference is read. Fails with {@link RequestFailure}: {@code INVALID_REQUEST}
 * for the size, {@code INVALID_REFERENCE} for an input, {@code STORAGE_ERROR} when the store of an input failed.
 */
@ApplicationScoped
public class CallPlanner {

    private final ReferenceLoader references;
    private final MemoryBudget memory;
    private final boolean singleImageEdits;

    CallPlanner(ReferenceLoader references, MemoryBudget memory, GatewaySettings config) {
        this.references = references;
        this.memory = memory;
        this.singleImageEdits = config.editMode() == GatewaySettings.EditMode.single;
    }

    /**
     * The size decided and the call to make.
     *
     * @param inputs the memory budget's lease of an edit's inputs, or null; {@link #release() released} when the
     *     request ends
     */
    public record Plan(SizeDecision.Accepted size, GatewayRequest request, MemoryBudget.Lease inputs) {

        /** Gives the inputs' bytes back to the memory budget: the request made its calls. */
        public void release() {
            if (inputs != null) {
                inputs.close();
            }
        }
    }

    /** The plan of {@code request}'s call. */
    public Uni<Plan> plan(ImageRequest request) {
        return Uni.createFrom().deferred(() -> {
            SizeDecision.Accepted size = accepted(SizePolicy.forGenerate(request.size()));
            if (request.operation() == Operation.GENERATE) {
                String sent = size.sent().toString();
                return Uni.createFrom()
                        .item(new Plan(
                                size, new GatewayRequest.Generate(request.prompt(), sent, request.quality()), null));
            }
            // Nothing is read before the budget holds the most the inputs can take; then it holds what they took.
            MemoryBudget.Lease lease = memory.lease(MemoryBudget.Kind.INPUTS);
            return lease.reserve(ReferenceLoader.mostBytes(request))
                    .chain(() -> references.load(request))
                    .invoke(inputs -> lease.resize(bytesOf(inputs)))
                    .map(inputs -> editPlan(request, inputs, lease))
                    .onFailure()
                    .invoke(lease::close)
                    .onCancellation()
                    .invoke(lease::close);
        });
    }

    private static long bytesOf(EditInputs inputs) {
        long bytes = inputs.mask() == null ? 0 : inputs.mask().bytes().length;
        for (LoadedImage reference : inputs.references()) {
            bytes += reference.bytes().length;
        }
        return bytes;
    }

    private Plan editPlan(ImageRequest request, EditInputs inputs, MemoryBudget.Lease lease) {
        ImageInfo base = inputs.references().get(0).info();
        SizeDecision.Accepted size = accepted(SizePolicy.forEdit(request.size(), base));
        if (base.size().isEmpty()) {
            Log.warnf(
                    "[%s] the base image is %s but its size cannot be read: sending it with %s",
                    request.requestId(), base.format().mimeType(), size.sent());
        }
        List<GatewayRequest.FilePart> parts = new ArrayList<>();
        for (int i = 0; i < inputs.references().size(); i++) {
            parts.add(filePart(inputs.references().get(i), i == 0 ? "image" : "reference-" + i));
        }
        GatewayRequest.FilePart mask = inputs.mask() == null ? null : filePart(inputs.mask(), "mask");
        return new Plan(
                size,
                new GatewayRequest.Edit(
                        request.prompt(), size.sent().toString(), request.quality(), parts, mask, singleImageEdits),
                lease);
    }

    private static SizeDecision.Accepted accepted(SizeDecision decision) {
        if (decision instanceof SizeDecision.Refused refused) {
            throw new RequestFailure(ErrorCode.INVALID_REQUEST, refused.message());
        }
        return (SizeDecision.Accepted) decision;
    }

    private static GatewayRequest.FilePart filePart(LoadedImage image, String name) {
        // The extension and type come from the real bytes: the gateway guesses the format from the extension.
        return new GatewayRequest.FilePart(
                image.bytes(),
                name + image.info().format().extension(),
                image.info().format().mimeType());
    }
}
