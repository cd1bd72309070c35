"""Where the two group protocols meet: :class:`~assignors.rebalance.GroupSimulator`, which hands a classic group
over to the KIP-848 model when a member upgrades, and the JSON scenarios it runs. Imports
:mod:`assignors._classic` and :mod:`assignors.consumer_group`."""
