"""gin-referee: a referee daemon for two-player Gin Rummy bots over ZeroMQ and msgpack."""
