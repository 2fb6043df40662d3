"""breakscan in a user's test suite: ``assert_max_graph_breaks`` and the pytest plugin."""
