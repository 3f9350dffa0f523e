package io.imageworker.messaging.intake;

import io.imageworker.config.PriorityLaneSwitch;
import io.smallrye.mutiny.Multi;
import io.smallrye.reactive.messaging.connector.InboundConnector;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.Flow;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;

/**
 * The source of an incoming channel that is off: it emits nothing, ever, and connects to nothing. The priority lane
 * uses it when no topic is configured ({@link PriorityLaneSwitch}).
 */
@ApplicationScoped
@Connector(PriorityLaneSwitch.IDLE_CONNECTOR)
public class IdleConnector implements InboundConnector {

    @Override
    public Flow.Publisher<? extends Message<?>> getPublisher(Config config) {
        return Multi.createFrom().nothing();
    }
}
