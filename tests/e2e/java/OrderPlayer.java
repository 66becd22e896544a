import ginrummy.Card;
import ginrummy.GinRummyPlayer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A test player for the EAAI bridge: it plays (take an upcard that melds, discard to the least
 * deadwood, knock as soon as it may) and asserts, at every call, that the calls come in the
 * framework's documented order with canonical card objects. A call out of order throws, which
 * ends the bridge with a crash fault quoting the reason. Each hand's end prints a line with
 * how many calls, knocks, defences and layoffs it checked.
 */
public final class OrderPlayer implements GinRummyPlayer {
    private static int calls, hands, knocks, defences, layoffs, stockDraws, faceUpDraws;

    private int me = -1;
    private final List<Card> hand = new ArrayList<>();
    private final Deque<Card> pile = new ArrayDeque<>();
    private Card offered;
    private boolean tookOffered;
    private Card drawn;
    private Card discarded;
    private String expect = "startGame";
    private int knocker = -1;
    private int finalHands;
    private final List<List<Card>> knockerMelds = new ArrayList<>();

    private void check(boolean ok, String what) {
        calls++;
        if (!ok) {
            throw new IllegalStateException("order: " + what + " (expected " + expect + ", hand " + hand + ")");
        }
    }

    private static void canonical(Card c) {
        if (c != Card.getCard(c.getRank(), c.getSuit())) {
            throw new IllegalStateException("order: a card object that is not the framework's own: " + c);
        }
    }

    @Override
    public void startGame(int playerNum, int startingPlayerNum, Card[] cards) {
        check(expect.equals("startGame"), "startGame");
        check(cards.length == 10 && (playerNum == 0 || playerNum == 1), "startGame's arguments");
        check(startingPlayerNum == 0 || startingPlayerNum == 1, "startGame's starting player");
        me = playerNum;
        hand.clear();
        pile.clear();
        for (Card c : cards) {
            canonical(c);
            hand.add(c);
        }
        knocker = -1;
        finalHands = 0;
        knockerMelds.clear();
        offered = null;
        expect = "play";
    }

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        check(expect.equals("play") && hand.size() == 10, "willDrawFaceUpCard");
        canonical(card);
        check(pile.isEmpty() || pile.peek() == card, "willDrawFaceUpCard of a card not on top of the pile");
        offered = card;
        List<Card> with = new ArrayList<>(hand);
        with.add(card);
        tookOffered = Melds.inMeld(with, card);
        return tookOffered;
    }

    @Override
    public void reportDraw(int playerNum, Card drawnCard) {
        check(expect.equals("play") && hand.size() == 10, "reportDraw");
        if (playerNum == me) {
            check(drawnCard != null, "reportDraw of my own draw without its card");
            canonical(drawnCard);
            if (offered != null && tookOffered) {
                check(drawnCard == offered, "reportDraw of another card than the face-up one I took");
                faceUpDraws++;
                pile.poll();
            } else {
                check(drawnCard != offered && !hand.contains(drawnCard), "reportDraw of a card I declined or hold");
                stockDraws++;
            }
            drawn = tookOffered && offered != null ? drawnCard : null;
            hand.add(drawnCard);
            expect = "getDiscard";
        } else {
            if (drawnCard != null) {
                canonical(drawnCard);
                check(pile.isEmpty() || pile.peek() == drawnCard, "the opponent drew a face-up card not on top");
                pile.poll();
            }
        }
        offered = null;
        tookOffered = false;
    }

    @Override
    public Card getDiscard() {
        check(expect.equals("getDiscard") && hand.size() == 11, "getDiscard");
        Card best = null;
        int bestDeadwood = Integer.MAX_VALUE;
        for (Card c : hand) {
            if (c == drawn) {
                continue;
            }
            List<Card> rest = new ArrayList<>(hand);
            rest.remove(c);
            int d = Melds.deadwood(rest);
            if (d < bestDeadwood || (d == bestDeadwood && c.getRank() > best.getRank())) {
                best = c;
                bestDeadwood = d;
            }
        }
        discarded = best;
        expect = "reportDiscard";
        return best;
    }

    @Override
    public void reportDiscard(int playerNum, Card discardedCard) {
        canonical(discardedCard);
        if (playerNum == me) {
            check(expect.equals("reportDiscard") && discardedCard == discarded, "reportDiscard of my discard");
            hand.remove(discardedCard);
            expect = "getFinalMelds";
        } else {
            check(expect.equals("play") && hand.size() == 10, "reportDiscard of the opponent");
        }
        pile.push(discardedCard);
    }

    @Override
    public ArrayList<ArrayList<Card>> getFinalMelds() {
        check(hand.size() == 10 && (expect.equals("getFinalMelds") || expect.equals("defend")), "getFinalMelds");
        if (expect.equals("defend")) {
            defences++;
            expect = "reportFinalMelds";
            return Melds.best(hand);
        }
        expect = "play";
        if (Melds.deadwood(hand) <= 10) {
            knocks++;
            knocker = me;
            expect = "reportFinalMelds";
            return Melds.best(hand);
        }
        return null;
    }

    @Override
    public void reportFinalMelds(int playerNum, ArrayList<ArrayList<Card>> melds) {
        check(expect.equals("reportFinalMelds") || (expect.equals("play") && playerNum != me && knocker < 0),
                "reportFinalMelds");
        for (List<Card> m : melds) {
            for (Card c : m) {
                canonical(c);
            }
            check(Melds.isMeld(m), "reportFinalMelds with a meld that is none: " + m);
        }
        if (knocker < 0) { // the opponent knocked: I declare next
            knocker = playerNum;
            expect = "defend";
        } else if (playerNum == knocker) {
            check(playerNum == me, "the knocker's melds twice");
            expect = "reportFinalMelds";
        } else {
            expect = "layoffs";
        }
        if (playerNum == knocker) {
            for (List<Card> m : melds) {
                knockerMelds.add(new ArrayList<>(m));
            }
        }
    }

    @Override
    public void reportLayoff(int playerNum, Card layoffCard, ArrayList<Card> opponentMeld) {
        check(expect.equals("layoffs") && playerNum != knocker, "reportLayoff");
        canonical(layoffCard);
        List<Card> found = null;
        for (List<Card> m : knockerMelds) {
            if (m.size() == opponentMeld.size() && m.containsAll(opponentMeld)) {
                found = m;
            }
        }
        check(found != null, "reportLayoff onto " + opponentMeld + ", not a knocker's meld as it stands");
        List<Card> after = new ArrayList<>(opponentMeld);
        after.add(layoffCard);
        check(Melds.isMeld(after), "reportLayoff of a card that does not extend the meld");
        found.add(layoffCard);
        layoffs++;
    }

    @Override
    public void reportFinalHand(int playerNum, ArrayList<Card> finalHand) {
        boolean after = expect.equals("play") || expect.equals("layoffs") || expect.equals("finalHand");
        check(after && playerNum == finalHands && finalHand.size() == 10, "reportFinalHand " + playerNum);
        if (playerNum == me) {
            check(finalHand.containsAll(hand), "reportFinalHand of another hand than mine: " + finalHand);
        }
        finalHands++;
        expect = "finalHand";
    }

    @Override
    public void reportScores(int[] scores) {
        check(expect.equals("finalHand") && finalHands == 2 && scores.length == 2, "reportScores");
        hands++;
        expect = "startGame";
        System.err.printf("order-player: hand %d in order (%d calls, %d knocks, %d defences, %d layoffs,"
                + " %d face-up and %d stock draws)%n", hands, calls, knocks, defences, layoffs, faceUpDraws,
                stockDraws);
    }
}
