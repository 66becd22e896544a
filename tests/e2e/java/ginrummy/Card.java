package ginrummy;

/**
 * A stand-in for the EAAI framework's card class, written for this test from its documented
 * API (ranks 0-12 for A..K, suits 0-3 for C H S D, one object per card, {@code getCard}); an
 * entrant supplies the framework's own classes instead.
 */
public final class Card {
    public static final Card[] allCards = new Card[52];

    static {
        for (int id = 0; id < 52; id++) {
            allCards[id] = new Card(id % 13, id / 13);
        }
    }

    public final int rank;
    public final int suit;

    private Card(int rank, int suit) {
        this.rank = rank;
        this.suit = suit;
    }

    public static Card getCard(int id) {
        return allCards[id];
    }

    public static Card getCard(int rank, int suit) {
        return allCards[suit * 13 + rank];
    }

    public int getRank() {
        return rank;
    }

    public int getSuit() {
        return suit;
    }

    public int getId() {
        return suit * 13 + rank;
    }

    @Override
    public String toString() {
        return "A23456789TJQK".charAt(rank) + "" + "CHSD".charAt(suit);
    }
}
