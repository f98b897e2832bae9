// The sync server library.
