package gin;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The loop of a gin-referee bot in Java: subclass it, implement {@link #act}, and call
 * {@link #run} from {@code main} (docs/protocol.md, "Java bots"). It reads
 * {@code GIN_REFEREE_ENDPOINT} and {@code GIN_REFEREE_TOKEN}, connects, says {@code hello},
 * answers every {@code request} with what {@code act} returns and every {@code ping} with a
 * {@code pong}, calls the {@code on...} hooks for the other messages, and after
 * {@code match_end} sends {@code bye}. Messages are the decoded msgpack maps
 * ({@link MsgPack}): read them with {@link #str}, {@link #num}, {@link #list} and
 * {@link #map}.
 *
 * <p>With {@code multiMatch} the hello asks to be kept for further matches; the loop then
 * waits after {@code match_end} for the next {@code match_start} (reset your state in
 * {@link #onMatchStart}) or the referee's {@code bye}.
 *
 * <p>{@link #run} returns the exit status, as the Python SDK's: 0 the match ended (or the
 * referee said bye), 1 the bot raised, 2 no endpoint or token, 3 rejected, 4 the referee was
 * silent for 60 s, 5 it sent something undecodable.
 */
public abstract class GinBot {
    /** How long the referee may be silent before the bot gives up (LINK_PATIENCE_MS). */
    public static final long PATIENCE_MS = 60_000;

    private final boolean multiMatch;
    private Wire wire;

    protected GinBot(boolean multiMatch) {
        this.multiMatch = multiMatch;
    }

    protected GinBot() {
        this(true);
    }

    /** The action to play: one entry of {@code list(request, "legal")}, sent as it is (a knock
     * may carry {@code melds}). */
    protected abstract Map<String, Object> act(Map<String, Object> request);

    protected void onMatchStart(Map<String, Object> message) {}

    protected void onHandStart(Map<String, Object> message) {}

    /** An opponent's move (also those delivered inside requests). */
    protected void onEvent(Map<String, Object> message) {}

    protected void onHandEnd(Map<String, Object> message) {}

    protected void onGameEnd(Map<String, Object> message) {}

    protected void onMatchEnd(Map<String, Object> message) {}

    /** The referee dropped something this bot sent; the default prints it. */
    protected void onError(Map<String, Object> message) {
        log("referee error: " + str(message, "code") + ": " + str(message, "message"));
    }

    /** Add options to the {@code hello} (e.g. {@code declare_melds}); the default adds none. */
    protected void helloOptions(Map<String, Object> hello) {}

    /** The connection; override to use another ZeroMQ implementation (e.g. for CURVE). */
    protected Wire connect(String endpoint) throws IOException {
        if (System.getenv("GIN_REFEREE_SERVER_KEY") != null) {
            throw new IOException("GIN_REFEREE_SERVER_KEY is set: this endpoint requires CURVE, which"
                    + " the kit's own ZMTP does not speak (docs/protocol.md, \"Java bots\")");
        }
        return Zmtp.connect(endpoint);
    }

    /** Send one message (a map) to the referee. */
    protected final void send(Map<String, Object> message) throws IOException {
        wire.send(MsgPack.encode(message));
    }

    /** Print a line on stderr (a bot's stdout is for nothing). */
    public static void log(String line) {
        System.err.println(line);
        System.err.flush();
    }

    /** Play: connect, hello, loop. Returns the exit status. */
    public final int run(String name) {
        String endpoint = System.getenv("GIN_REFEREE_ENDPOINT");
        String token = System.getenv("GIN_REFEREE_TOKEN");
        if (endpoint == null || endpoint.isEmpty() || token == null || token.isEmpty()) {
            log(name + ": GIN_REFEREE_ENDPOINT and GIN_REFEREE_TOKEN must be set");
            return 2;
        }
        try {
            wire = connect(endpoint);
        } catch (IOException e) {
            log(name + ": cannot connect to " + endpoint + ": " + e.getMessage());
            return 2;
        }
        try {
            Map<String, Object> hello = message("hello");
            hello.put("protocol_version", 1);
            hello.put("name", name);
            hello.put("token", token);
            if (multiMatch) {
                hello.put("multi_match", true);
            }
            helloOptions(hello);
            send(hello);
            return loop(name);
        } catch (IOException e) {
            log(name + ": connection lost: " + e.getMessage());
            return 4;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (RuntimeException e) {
            log(name + ": the bot raised:");
            e.printStackTrace();
            return 1;
        } finally {
            wire.close(1000);
        }
    }

    private int loop(String name) throws IOException, InterruptedException {
        boolean kept = false; // multi_match granted: stay after match_end
        while (true) {
            byte[] frame = wire.receive(PATIENCE_MS);
            if (frame == null) {
                log(name + ": the referee was silent for " + PATIENCE_MS / 1000 + " s");
                return 4;
            }
            Map<String, Object> msg;
            try {
                msg = map(MsgPack.decode(frame));
            } catch (RuntimeException e) {
                log(name + ": undecodable message from the referee: " + e.getMessage());
                return 5;
            }
            String type = str(msg, "type");
            switch (type == null ? "" : type) {
                case "welcome" -> kept = Boolean.TRUE.equals(msg.get("multi_match"));
                case "reject" -> {
                    log(name + ": rejected: " + str(msg, "code") + ": " + str(msg, "message"));
                    return 3;
                }
                case "request" -> {
                    Object events = msg.get("events");
                    if (events instanceof List<?> inline) {
                        for (Object event : inline) {
                            onEvent(map(event));
                        }
                    }
                    Map<String, Object> reply = message("action");
                    reply.put("request_id", msg.get("request_id"));
                    reply.put("action", act(msg));
                    send(reply);
                }
                case "ping" -> {
                    Map<String, Object> pong = message("pong");
                    pong.put("nonce", msg.get("nonce"));
                    send(pong);
                }
                case "match_start" -> onMatchStart(msg);
                case "hand_start" -> onHandStart(msg);
                case "event" -> onEvent(msg);
                case "hand_end" -> onHandEnd(msg);
                case "game_end" -> onGameEnd(msg);
                case "error" -> onError(msg);
                case "match_end" -> {
                    onMatchEnd(msg);
                    log(name + ": match over: " + str(msg, "result") + " (" + str(msg, "reason") + ")");
                    if (!kept) {
                        Map<String, Object> bye = message("bye");
                        bye.put("reason", "match over");
                        send(bye);
                        return 0;
                    }
                }
                case "bye" -> {
                    return 0;
                }
                default -> {} // a type this bot does not know: ignored
            }
        }
    }

    // ------------------------------------------------------------------ reading messages

    /** A new message map with its {@code type}. */
    public static Map<String, Object> message(String type) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", type);
        return m;
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> map(Object value) {
        if (!(value instanceof Map)) {
            throw new MsgPack.FormatError("not a map: " + value);
        }
        return (Map<String, Object>) value;
    }

    /** A string field (null when absent). */
    public static String str(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v instanceof String s ? s : null;
    }

    /** An integer field (-1 when absent or nil). */
    public static long num(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v instanceof Long n ? n : -1;
    }

    /** A list field (empty when absent or nil). */
    @SuppressWarnings("unchecked")
    public static List<Object> list(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v instanceof List<?> l ? (List<Object>) l : new ArrayList<>();
    }

    /** A list of cards ({@code ["As", "Td"]}) as strings. */
    public static List<String> cards(Object value) {
        List<String> out = new ArrayList<>();
        if (value instanceof List<?> l) {
            for (Object c : l) {
                out.add((String) c);
            }
        }
        return out;
    }
}
