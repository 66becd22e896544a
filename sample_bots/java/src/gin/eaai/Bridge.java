package gin.eaai;

import gin.GinBot;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs an unchanged EAAI Gin Rummy Challenge entry (a class implementing
 * {@code ginrummy.GinRummyPlayer}) as a gin-referee bot:
 *
 * <pre>java -cp sample_bots/java/build gin.eaai.Bridge --classes entry.jar --player my.Player</pre>
 *
 * <p>{@code --classes} names the entry's compiled classes (a directory or a jar; several, or a
 * {@code :}-separated list) holding the player and the framework's {@code ginrummy} classes it
 * was built against: the bridge ships none of them and reaches them by reflection only. Each
 * match gets a new player object (its no-argument constructor).
 *
 * <p>The player is called in the framework's order: {@code startGame} at each hand_start;
 * {@code willDrawFaceUpCard} for each upcard and draw decision (not for the non-dealer's
 * forced stock draw after both passed), then {@code reportDraw} of the card taken or drawn;
 * {@code getDiscard}, {@code reportDiscard}, then {@code getFinalMelds}: null is a discard,
 * melds a knock with those melds. The opponent's moves are reported as they arrive
 * ({@code reportDraw} with null for a stock draw). At the end of a hand: {@code
 * reportFinalMelds} of the knocker and the defender's {@code getFinalMelds} (at the referee's
 * {@code defend} request: the bridge asks for {@code declare_melds}, and the melds are scored as
 * declared), {@code reportFinalMelds} of the defender, {@code reportLayoff} for each card laid
 * off with the meld as it was before it,
 * {@code reportFinalHand} for both seats and {@code reportScores}.
 */
public final class Bridge extends GinBot {
    private static final String RANKS = "A23456789TJQK";
    private static final String SUITS = "chsd"; // the framework's suit order: C H S D

    private final Class<?> playerClass;
    private final Method getCard, getRank, getSuit;
    private final Map<String, Method> calls = new LinkedHashMap<>();
    private final Class<?> cardClass;
    private Object player;
    private int seat;
    private final Set<String> hand = new HashSet<>();
    private boolean drewFromStock;
    private int knocker = -1;
    private boolean knockerReported;

    Bridge(ClassLoader loader, String playerName) throws ReflectiveOperationException {
        super(true);
        Class<?> api = Class.forName("ginrummy.GinRummyPlayer", true, loader);
        cardClass = Class.forName("ginrummy.Card", true, loader);
        playerClass = Class.forName(playerName, true, loader);
        if (!api.isAssignableFrom(playerClass)) {
            throw new ClassCastException(playerName + " does not implement ginrummy.GinRummyPlayer");
        }
        playerClass.getConstructor(); // fails now, not at the first match, without one
        getCard = cardClass.getMethod("getCard", int.class, int.class);
        getRank = cardClass.getMethod("getRank");
        getSuit = cardClass.getMethod("getSuit");
        for (Method m : api.getMethods()) {
            calls.put(m.getName(), m);
        }
    }

    // ------------------------------------------------------------------ cards

    private Object card(String text) {
        if (text == null) {
            return null;
        }
        return invoke(getCard, null, RANKS.indexOf(text.charAt(0)), SUITS.indexOf(text.charAt(1)));
    }

    private String text(Object card) {
        if (card == null) {
            return null;
        }
        int rank = (Integer) invoke(getRank, card);
        int suit = (Integer) invoke(getSuit, card);
        return "" + RANKS.charAt(rank) + SUITS.charAt(suit);
    }

    private ArrayList<Object> cardList(List<String> cards) {
        ArrayList<Object> out = new ArrayList<>();
        for (String c : cards) {
            out.add(card(c));
        }
        return out;
    }

    private ArrayList<ArrayList<Object>> meldList(Object melds) {
        ArrayList<ArrayList<Object>> out = new ArrayList<>();
        if (melds instanceof List<?> list) {
            for (Object meld : list) {
                out.add(cardList(cards(meld)));
            }
        }
        return out;
    }

    private List<Object> wireMelds(Object melds) {
        List<Object> out = new ArrayList<>();
        for (Object meld : (List<?>) melds) {
            List<Object> m = new ArrayList<>();
            for (Object c : (List<?>) meld) {
                m.add(text(c));
            }
            out.add(m);
        }
        return out;
    }

    // ------------------------------------------------------------------ the player's methods

    private Object call(String name, Object... args) {
        return invoke(calls.get(name), player, args);
    }

    private static Object invoke(Method method, Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ the protocol

    @Override
    protected void onMatchStart(Map<String, Object> message) {
        seat = (int) num(message, "seat");
        try {
            player = playerClass.getConstructor().newInstance();
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("the player's constructor raised", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected void onHandStart(Map<String, Object> message) {
        List<String> dealt = cards(message.get("hand_cards"));
        hand.clear();
        hand.addAll(dealt);
        drewFromStock = false;
        knocker = -1;
        knockerReported = false;
        Object cards = java.lang.reflect.Array.newInstance(cardClass, dealt.size());
        for (int i = 0; i < dealt.size(); i++) {
            java.lang.reflect.Array.set(cards, i, card(dealt.get(i)));
        }
        int starting = 1 - (int) num(message, "dealer"); // the non-dealer plays first
        call("startGame", seat, starting, cards);
    }

    @Override
    protected Map<String, Object> act(Map<String, Object> request) {
        Map<String, Object> view = map(request.get("view"));
        List<Object> legal = list(request, "legal");
        String decision = str(request, "decision");
        if (drewFromStock) { // the card drawn is the one new in the hand
            drewFromStock = false;
            for (String c : cards(view.get("hand"))) {
                if (hand.add(c)) {
                    call("reportDraw", seat, card(c));
                }
            }
        }
        if ("discard".equals(decision)) {
            return discard();
        }
        if ("defend".equals(decision)) {
            return defend(request);
        }
        if (legal.size() == 1 && "draw_stock".equals(str(map(legal.get(0)), "kind"))) {
            drewFromStock = true; // both passed the upcard: the framework does not ask
            return action("draw_stock", null);
        }
        List<String> pile = cards(view.get("discard_pile"));
        String top = pile.get(pile.size() - 1);
        if ((Boolean) call("willDrawFaceUpCard", card(top))) {
            hand.add(top);
            call("reportDraw", seat, card(top));
            return action("take_discard", null);
        }
        if ("first_upcard".equals(decision)) {
            return action("pass_upcard", null);
        }
        drewFromStock = true;
        return action("draw_stock", null);
    }

    private Map<String, Object> discard() {
        String card = text(call("getDiscard"));
        hand.remove(card);
        call("reportDiscard", seat, card(card));
        Object melds = call("getFinalMelds");
        if (melds == null) {
            return action("discard", card);
        }
        Map<String, Object> knock = action("knock", card);
        knock.put("melds", wireMelds(melds));
        knocker = seat;
        return knock;
    }

    /** The opponent knocked: its melds are reported, then this player declares its own. */
    private Map<String, Object> defend(Map<String, Object> request) {
        call("reportFinalMelds", 1 - seat, meldList(request.get("knocker_melds")));
        knockerReported = true;
        Object melds = call("getFinalMelds");
        Map<String, Object> defend = action("defend", null);
        if (melds != null) {
            defend.put("melds", wireMelds(melds));
        }
        return defend;
    }

    @Override
    protected void helloOptions(Map<String, Object> hello) {
        hello.put("declare_melds", true); // the defender's getFinalMelds is scored as declared
    }

    private static Map<String, Object> action(String kind, String card) {
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("kind", kind);
        if (card != null) {
            a.put("card", card);
        }
        return a;
    }

    @Override
    protected void onEvent(Map<String, Object> message) {
        int who = (int) num(message, "seat");
        Map<String, Object> move = map(message.get("action"));
        String kind = str(move, "kind");
        switch (kind == null ? "" : kind) {
            case "take_discard" -> call("reportDraw", who, card(str(move, "card")));
            case "draw_stock" -> call("reportDraw", who, null);
            case "discard" -> call("reportDiscard", who, card(str(move, "card")));
            case "knock" -> {
                call("reportDiscard", who, card(str(move, "card")));
                knocker = who;
            }
            case "big_gin" -> knocker = who;
            default -> {} // pass_upcard: the framework reports no declined upcard
        }
    }

    @Override
    protected void onHandEnd(Map<String, Object> message) {
        List<Object> hands = list(message, "hands");
        List<Object> melds = list(message, "melds");
        if (knocker >= 0 && melds.size() == 2) {
            int defender = 1 - knocker;
            if (!knockerReported) {
                call("reportFinalMelds", knocker, meldList(melds.get(knocker)));
            }
            if (defender == seat && !knockerReported) {
                call("getFinalMelds"); // not asked by the referee (an older one): for the order
            }
            call("reportFinalMelds", defender, meldList(melds.get(defender)));
            reportLayoffs(defender, list(message, "layoffs"), list(message, "layoff_melds"));
        }
        for (int j = 0; j < hands.size(); j++) {
            call("reportFinalHand", j, cardList(cards(hands.get(j))));
        }
        List<Object> scores = list(message, "scores");
        int[] s = new int[scores.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = ((Long) scores.get(i)).intValue();
        }
        call("reportScores", (Object) s);
    }

    /** Each layoff with the knocker's meld as it stood before it (the framework's form): a
     * {@code layoff_melds} entry without the card laid off. */
    private void reportLayoffs(int defender, List<Object> layoffs, List<Object> after) {
        for (int i = 0; i < layoffs.size() && i < after.size(); i++) {
            String laid = cards(layoffs.get(i)).get(0);
            List<String> before = new ArrayList<>(cards(after.get(i)));
            before.remove(laid);
            call("reportLayoff", defender, card(laid), cardList(before));
        }
    }

    // ------------------------------------------------------------------ main

    static ClassLoader loader(List<String> paths) throws MalformedURLException {
        List<URL> urls = new ArrayList<>();
        for (String path : paths) {
            for (String part : path.split(File.pathSeparator)) {
                if (part.isEmpty()) {
                    continue;
                }
                File file = new File(part);
                if (!file.exists()) {
                    throw new IllegalArgumentException("--classes " + part + ": no such file or directory");
                }
                urls.add(file.toURI().toURL());
            }
        }
        return new URLClassLoader(urls.toArray(new URL[0]), Bridge.class.getClassLoader());
    }

    public static void main(String[] args) {
        List<String> classes = new ArrayList<>();
        String playerName = null;
        String name = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 < args.length && (a.equals("--classes") || a.equals("--player") || a.equals("--name"))) {
                String v = args[++i];
                switch (a) {
                    case "--classes" -> classes.add(v);
                    case "--player" -> playerName = v;
                    default -> name = v;
                }
            } else {
                log("eaai-bridge: unknown argument " + a
                        + "; usage: gin.eaai.Bridge --classes DIR|JAR --player CLASS [--name NAME]");
                System.exit(2);
            }
        }
        if (classes.isEmpty() || playerName == null) {
            log("eaai-bridge: usage: gin.eaai.Bridge --classes DIR|JAR --player CLASS [--name NAME]");
            System.exit(2);
        }
        Bridge bridge;
        try {
            bridge = new Bridge(loader(classes), playerName);
        } catch (ReflectiveOperationException | IllegalArgumentException | ClassCastException
                | java.io.IOException | LinkageError e) {
            log("eaai-bridge: cannot load " + playerName + " from " + String.join(" ", classes) + ": " + e);
            System.exit(2);
            return;
        }
        String shown = name != null ? name : playerName.substring(playerName.lastIndexOf('.') + 1);
        System.exit(bridge.run(shown.length() > 64 ? shown.substring(0, 64) : shown));
    }
}
