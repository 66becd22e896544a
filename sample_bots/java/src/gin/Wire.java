package gin;

import java.io.IOException;

/**
 * One connection to the referee, one message per frame: what {@link GinBot} needs of a
 * ZeroMQ DEALER socket. {@link Zmtp} is the kit's own (plain ZMTP 3.1, no CURVE); a bot that
 * must connect over CURVE overrides {@link GinBot#connect} with a {@code Wire} over a library
 * that has it (docs/protocol.md, "Java bots").
 */
public interface Wire extends AutoCloseable {
    /** Send one message (one frame). */
    void send(byte[] message) throws IOException;

    /** The next message, or null when none came within {@code timeoutMs}; throws when the
     * connection is gone. */
    byte[] receive(long timeoutMs) throws IOException, InterruptedException;

    /** Flush what was sent (at most {@code lingerMs}) and close. */
    void close(long lingerMs);

    @Override
    default void close() {
        close(1000);
    }
}
