"""The floor every other package stands on: errors, the data model, the assignor interface and base class,
Java's orders, load, and the JSON input readers. Imports nothing else from :mod:`assignors`."""
