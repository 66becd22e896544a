package gin;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A ZeroMQ DEALER's side of one connection in plain Java (JDK 16+), enough for the referee:
 * ZMTP 3.1 (RFC 37) with the NULL mechanism over {@code ipc://} (a unix socket) or
 * {@code tcp://}, single-frame messages, PINGs answered with PONGs. No CURVE: the referee's
 * {@code tcp://} endpoints require it unless it runs with {@code --insecure}; the bots it starts
 * itself get an {@code ipc://} endpoint, which needs none.
 *
 * <p>A reader thread parses what arrives: PING commands are answered at once (the referee
 * sends one a second), data frames go to a queue that {@link #receive} takes from, and the end
 * of the connection or a protocol error ends the queue.
 */
public final class Zmtp implements Wire {
    private static final int FLAG_MORE = 1, FLAG_LONG = 2, FLAG_COMMAND = 4;
    private static final int MAX_FRAME = 1 << 20;
    private static final byte[] END = new byte[0];

    private final SocketChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(1 << 16).flip();
    private final LinkedBlockingQueue<byte[]> inbox = new LinkedBlockingQueue<>();
    private volatile String failure;

    private Zmtp(SocketChannel channel) {
        this.channel = channel; // read and written through the channel itself: the streams of
        // java.nio.channels.Channels would make a write wait for a blocked read
    }

    /** Connect to {@code endpoint} ({@code ipc:///path} or {@code tcp://host:port}) and do the
     * handshake. */
    public static Zmtp connect(String endpoint) throws IOException {
        SocketChannel channel;
        if (endpoint.startsWith("ipc://")) {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(UnixDomainSocketAddress.of(endpoint.substring(6)));
        } else if (endpoint.startsWith("tcp://")) {
            String rest = endpoint.substring(6);
            int colon = rest.lastIndexOf(':');
            if (colon < 0) {
                throw new IOException("no port in " + endpoint);
            }
            String host = rest.substring(0, colon).replace("[", "").replace("]", "");
            channel = SocketChannel.open(new InetSocketAddress(host, Integer.parseInt(rest.substring(colon + 1))));
            channel.socket().setTcpNoDelay(true);
        } else {
            throw new IOException("not an ipc:// or tcp:// endpoint: " + endpoint);
        }
        Zmtp wire = new Zmtp(channel);
        try {
            wire.handshake();
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        Thread reader = new Thread(wire::readLoop, "zmtp-reader");
        reader.setDaemon(true);
        reader.start();
        return wire;
    }

    private void handshake() throws IOException {
        byte[] greeting = new byte[64];
        greeting[0] = (byte) 0xff;
        greeting[9] = 0x7f;
        greeting[10] = 3; // ZMTP 3.1: the referee's PINGs come, and are answered
        greeting[11] = 1;
        byte[] mechanism = "NULL".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(mechanism, 0, greeting, 12, mechanism.length);
        write(greeting); // as-server 0 and the filler stay zero
        byte[] peer = readFully(64);
        if ((peer[0] & 0xff) != 0xff || (peer[9] & 1) == 0) {
            throw new IOException("the peer is not a ZMTP 3 server");
        }
        if (peer[10] < 3) {
            throw new IOException("the peer speaks ZMTP " + peer[10] + ", not 3");
        }
        String theirs = new String(peer, 12, 20, StandardCharsets.US_ASCII).trim();
        if (!theirs.startsWith("NULL")) {
            throw new IOException("the referee requires the " + theirs.replace("\0", "")
                    + " mechanism (CURVE: see docs/protocol.md, \"Java bots\")");
        }
        byte[] ready = property(command("READY"), "Socket-Type", "DEALER");
        writeFrame(FLAG_COMMAND, ready);
        byte[] body = readBody(readByte());
        String name = commandName(body);
        if (!"READY".equals(name)) {
            throw new IOException("the referee sent " + name + " instead of READY"
                    + ("ERROR".equals(name) ? ": " + errorReason(body) : ""));
        }
    }

    private static byte[] command(String name) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        byte[] body = new byte[1 + n.length];
        body[0] = (byte) n.length;
        System.arraycopy(n, 0, body, 1, n.length);
        return body;
    }

    private static byte[] property(byte[] body, String name, String value) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        byte[] v = value.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[body.length + 1 + n.length + 4 + v.length];
        System.arraycopy(body, 0, all, 0, body.length);
        int at = body.length;
        all[at++] = (byte) n.length;
        System.arraycopy(n, 0, all, at, n.length);
        at += n.length;
        all[at++] = (byte) (v.length >>> 24);
        all[at++] = (byte) (v.length >>> 16);
        all[at++] = (byte) (v.length >>> 8);
        all[at++] = (byte) v.length;
        System.arraycopy(v, 0, all, at, v.length);
        return all;
    }

    private static String commandName(byte[] body) {
        if (body.length == 0 || body.length < 1 + (body[0] & 0xff)) {
            return "";
        }
        return new String(body, 1, body[0] & 0xff, StandardCharsets.US_ASCII);
    }

    private static String errorReason(byte[] body) {
        int at = 1 + (body[0] & 0xff);
        if (at >= body.length) {
            return "";
        }
        int n = Math.min(body[at] & 0xff, body.length - at - 1);
        return new String(body, at + 1, n, StandardCharsets.UTF_8);
    }

    private void fill() throws IOException {
        buffer.compact();
        int n = channel.read(buffer);
        buffer.flip();
        if (n < 0) {
            throw new EOFException("the referee closed the connection");
        }
    }

    private int readByte() throws IOException {
        while (!buffer.hasRemaining()) {
            fill();
        }
        return buffer.get() & 0xff;
    }

    private byte[] readFully(int n) throws IOException {
        byte[] out = new byte[n];
        int at = 0;
        while (at < n) {
            if (!buffer.hasRemaining()) {
                fill();
            }
            int k = Math.min(n - at, buffer.remaining());
            buffer.get(out, at, k);
            at += k;
        }
        return out;
    }

    private void write(byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }

    private byte[] readBody(int flags) throws IOException {
        long size;
        if ((flags & FLAG_LONG) != 0) {
            size = 0;
            for (byte b : readFully(8)) {
                size = (size << 8) | (b & 0xff);
            }
        } else {
            size = readByte();
        }
        if (size < 0 || size > MAX_FRAME) {
            throw new IOException("a frame of " + size + " bytes");
        }
        return readFully((int) size);
    }

    private synchronized void writeFrame(int flags, byte[] body) throws IOException {
        int head = body.length > 255 ? 9 : 2;
        byte[] frame = new byte[head + body.length];
        if (head == 9) {
            frame[0] = (byte) (flags | FLAG_LONG);
            long n = body.length;
            for (int i = 8; i >= 1; i--) {
                frame[i] = (byte) n;
                n >>>= 8;
            }
        } else {
            frame[0] = (byte) flags;
            frame[1] = (byte) body.length;
        }
        System.arraycopy(body, 0, frame, head, body.length);
        write(frame);
    }

    private void readLoop() {
        try {
            while (true) {
                int flags = readByte();
                byte[] body = readBody(flags);
                if ((flags & FLAG_COMMAND) != 0) {
                    String name = commandName(body);
                    if ("PING".equals(name) && body.length >= 7) {
                        byte[] pong = command("PONG");
                        byte[] reply = new byte[pong.length + body.length - 7];
                        System.arraycopy(pong, 0, reply, 0, pong.length);
                        System.arraycopy(body, 7, reply, pong.length, body.length - 7);
                        writeFrame(FLAG_COMMAND, reply);
                    } else if ("ERROR".equals(name)) {
                        throw new IOException("the referee sent ERROR: " + errorReason(body));
                    }
                } else if ((flags & FLAG_MORE) == 0) {
                    inbox.put(body);
                }
            }
        } catch (IOException | InterruptedException e) {
            failure = e.getMessage() == null ? e.toString() : e.getMessage();
            inbox.offer(END);
        }
    }

    @Override
    public void send(byte[] message) throws IOException {
        writeFrame(0, message);
    }

    @Override
    public byte[] receive(long timeoutMs) throws IOException, InterruptedException {
        byte[] message = inbox.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (message == END) {
            inbox.offer(END);
            throw new IOException(failure == null ? "connection closed" : failure);
        }
        return message;
    }

    @Override
    public void close(long lingerMs) {
        try {
            channel.shutdownOutput(); // what was written is sent before the FIN
        } catch (IOException ignored) {
            // already gone
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing left to do
        }
    }
}
