"""The load-aware sticky assignor (``weighted-sticky``): ``assignor`` (the protocol side), ``weights`` (where
weights come from), ``balance`` (the algorithm)."""
