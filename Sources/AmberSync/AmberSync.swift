// The sync client; see SyncClient.swift.
