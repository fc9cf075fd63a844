"""The hall: several servers for one event, which is active, their proofs and the event they share."""
