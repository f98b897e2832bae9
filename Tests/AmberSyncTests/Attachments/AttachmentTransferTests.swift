import Amber
import AmberLock
import AmberSyncTestSupport
import AmberTestSupport
import Foundation
import GRDB
import Testing

@testable import AmberSync

/// Notes of finished transfers are written a batch at a time, and none is lost when a transfer fails.
@Suite(.boundedConcurrency) struct NotesInBatchesTests {
    @Test func notesAreWrittenInFullBatchesThenTheRestAtTheEnd() async throws {
        let written = LockedValue<[[Int]]>([])
        let notes = NotesInBatches<Int> { batch in written.withLock { $0.append(batch) } }
        try await notes.writing { () async throws(SyncError) in
            for note in 0..<250 { try notes.add(note) }
        }
        let batches = written.withLock { $0 }
        #expect(batches.map(\.count) == [100, 100, 50])
        #expect(batches.flatMap { $0 } == Array(0..<250))
    }

    @Test func theNotesOfTransfersDoneBeforeAFailureAreWritten() async throws {
        let written = LockedValue<[Int]>([])
        let notes = NotesInBatches<Int> { batch in written.withLock { $0 += batch } }
        await #expect(throws: SyncError.self) {
            try await notes.writing { () async throws(SyncError) in
                for note in 0..<3 { try notes.add(note) }
                throw SyncError(.offline, "the connection was cut")
            }
        }
        #expect(written.withLock { $0 } == [0, 1, 2])
    }

    @Test func aFailedWriteIsThrown() async throws {
        let notes = NotesInBatches<Int> { _ throws(SyncError) in throw SyncError(.storage, "the disk is full") }
        await #expect(throws: SyncError.self) {
            try await notes.writing { () async throws(SyncError) in try notes.add(1) }
        }
    }
}

/// Many attachments through sync: every one noted on both phones, though the notes go in batches.
@Suite("Many attachments through sync", .boundedConcurrency)
struct ManyAttachmentsTests {
    static func count(_ table: String, on device: AttachmentDevice) throws -> Int {
        try device.storage.syncWrite { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? -1 }
    }

    @Test(arguments: Backend.allCases)
    func moreAttachmentsThanABatchAreAllNotedUpAndDown(backend: Backend) async throws {
        let server = try await TestServer.start(backend)
        let token = try await server.addUser()
        let day = try AttachmentDevice(server: server.url, token: token)
        let count = NotesInBatches<Int>.batchSize + 30
        var notes: [AttachedNote] = []
        for index in 0..<count {
            let file = try day.client.attachments.add(Data("file \(index)".utf8), mediaType: "text/plain")
            notes.append(AttachedNote(id: UUID(), text: "note \(index)", photo: file, files: []))
        }
        try day.notes.add(contentsOf: notes)
        try await day.client.sync()
        // The day phone knows the server has every one: an edit sends none again.
        #expect(try Self.count("amber_sync_attachment_remote", on: day) == count)
        let events = Collected(day.client.events())
        try day.notes.add(notes[0].with(text: "edited"))
        try await day.client.sync()
        #expect(
            !events.values.contains {
                if case .progress(let p) = $0 { p.phase == .uploadingAttachments } else { false }
            })
        events.cancel()

        let night = try AttachmentDevice(server: server.url, token: token)
        try await night.client.sync()
        #expect(try Self.count("amber_sync_attachment_wanted", on: night) == 0)
        for note in notes {
            let photo = try #require(note.photo)
            #expect(night.client.attachments.contains(photo))
        }
        await server.stop()
    }
}

/// How many transfers run at once: many small files together, large ones within the memory bound.
@Suite(.boundedConcurrency) struct TransfersAtOnceTests {
    /// The most transfers of `sizes` that ran at once, and the most bytes they held together.
    static func peak(_ sizes: [Int64]) async throws -> (count: Int, bytes: Int64) {
        let state = LockedValue((running: 0, holding: Int64(0), count: 0, bytes: Int64(0)))
        try await AttachmentTransfers.forEach(sizes, size: \.self) { size throws(SyncError) in
            let held = min(size, Int64(AttachmentTransfers.partSize))
            state.withLock { state in
                state.running += 1
                state.holding += held
                state.count = max(state.count, state.running)
                state.bytes = max(state.bytes, state.holding)
            }
            try? await Task.sleep(for: .milliseconds(20))
            state.withLock { state in
                state.running -= 1
                state.holding -= held
            }
        }
        return state.withLock { ($0.count, $0.bytes) }
    }

    @Test func smallFilesGoEightAtOnce() async throws {
        let peak = try await Self.peak(Array(repeating: 10_240, count: 40))
        #expect(peak.count == AttachmentTransfers.concurrentTransfers)
    }

    @Test func largeFilesGoFourAtOnce() async throws {
        let large = Int64(AttachmentTransfers.partSize) * 3
        let peak = try await Self.peak(Array(repeating: large, count: 12))
        #expect(peak.count == 4)
        #expect(peak.bytes <= Int64(AttachmentTransfers.bytesInFlight))
    }

    @Test func aMixNeverHoldsMoreThanTheBound() async throws {
        let part = Int64(AttachmentTransfers.partSize)
        let sizes = (0..<60).map { index in index % 3 == 0 ? part * 2 : Int64(5_000 + index) }
        let peak = try await Self.peak(sizes)
        #expect(peak.bytes <= Int64(AttachmentTransfers.bytesInFlight))
        #expect(peak.count > 4)
    }
}
