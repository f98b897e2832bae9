import AmberLock
import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Notices commits that other processes make to the same SQLite file, and signals the change
/// notifier for each user whose records they changed, so that pulls waiting in this process
/// wake up for pushes served by another `amber-sync serve` on the same file.
///
/// `PRAGMA data_version` on a read-only connection of its own tells cheaply whether anyone else
/// committed, and only then are the users' version counters read. When to ask:
///
/// - On Linux, whenever the database file or its `-wal` file is written: inotify watches the
///   file's folder (SQLite truncates and recreates the `-wal` file, so the files themselves are
///   not watched). SQLite writes a commit to the `-wal` file *before* the commit becomes visible
///   (it syncs the file, then publishes the commit in the `-shm` index through shared memory,
///   which raises no event), so after a burst of writes the watcher asks at once, then every
///   millisecond or two for `closeFollowUp` (a commit's sync takes that long at most on a
///   healthy disk), then at growing intervals until `followUpWindow` has passed.
/// - Every `safetyInterval` besides, in case an event is lost (a full inotify queue).
/// - Every `fallbackInterval` without file events: on other platforms, or when inotify is
///   unavailable (`fs.inotify.max_user_watches` or `max_user_instances` reached).
///
/// The events are read on a thread of its own, not on the cooperative pool, which a busy server
/// needs for its requests. `stop()` (or `deinit`) ends the thread and closes its descriptors.
final class ExternalCommitWatcher: Sendable {
    /// The write end of the pipe that wakes the thread to stop.
    private let wakeUp: Int32
    /// Signalled by the thread as it ends.
    private let ended = DispatchSemaphore(value: 0)
    private let stopped = LockedValue(false)
    private let running = LockedValue(true)
    /// Whether file events tell when to look (inotify is watching), rather than a timer alone.
    let usesFileEvents: Bool

    /// How often the file is checked while file events are watched, in case one was missed.
    static let safetyInterval = Duration.seconds(1)
    /// How long after the last write the file is checked again.
    static let followUpWindow = Duration.seconds(1)
    /// How long after the last write the file is checked every `closeFollowUpStep`.
    static let closeFollowUp = Duration.milliseconds(100)
    /// The longest time between two checks within `closeFollowUp` of a write.
    static let closeFollowUpStep = Duration.milliseconds(2)
    /// How long file events are left unread after a batch of them: a commit writes its pages one
    /// `pwrite` at a time, each an event, and reading them as they come woke the thread for every
    /// page the server itself wrote. Unread, a file's repeated events merge into one in the kernel's
    /// queue; a full queue reports an overflow, which counts as a write.
    static let eventSpacing = Duration.milliseconds(2)

    /// Starts watching the file at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - notifier: Notified for each user whose version counter another process raised.
    ///   - fallbackInterval: How often to look when there are no file events to wait for.
    ///   - fileEvents: Whether to watch file events where the platform has them; tests turn them off.
    init(path: String, notifier: ChangeNotifier, fallbackInterval: Duration, fileEvents: Bool = true) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(1)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        // The state at start, read before returning, so a commit right after is not taken for it.
        let start = try connection.read { db in (try Self.dataVersion(db), try Self.userVersions(db)) }

        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE)
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wakeUp = pipeEnds[1]
        let events = fileEvents ? FileEvents(watching: path) : nil
        usesFileEvents = events != nil
        let loop = WatchLoop(
            connection: connection, notifier: notifier, wakeUp: pipeEnds[0], events: events,
            fallbackInterval: fallbackInterval, dataVersion: start.0, userVersions: start.1)
        let (ended, running) = (self.ended, self.running)
        let thread = Thread {
            loop.run()
            running.withLock { $0 = false }
            ended.signal()
        }
        thread.name = "amber-sync external commits"
        thread.start()
    }

    /// Ends the watching thread and waits for it; closes its connection and descriptors.
    /// Calling it again does nothing.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakeUp, &byte, 1)
        ended.wait()
        close(wakeUp)
    }

    /// Whether the watching thread still runs.
    var isRunning: Bool { running.withLock { $0 } }

    deinit {
        stop()
    }

    /// A number that changes whenever another connection commits to the file.
    fileprivate static func dataVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
    }

    /// Each user's last version.
    fileprivate static func userVersions(_ db: Database) throws -> [Int64: Int64] {
        var versions: [Int64: Int64] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, version FROM amber_sync_users")) {
            versions[row[0]] = row[1]
        }
        return versions
    }
}

/// The watcher's thread: waits for file events, its wake-up pipe or its next check, whichever comes first.
private final class WatchLoop: @unchecked Sendable {
    // @unchecked: handed to the thread at its start and used there only.
    let connection: DatabaseQueue
    let notifier: ChangeNotifier
    let wakeUp: Int32
    var events: FileEvents?
    let fallbackInterval: Duration
    var dataVersion: Int
    var userVersions: [Int64: Int64]
    let clock = ContinuousClock()
    var lastCheck: ContinuousClock.Instant
    /// When the next check may come: at least a millisecond after the last, and later once reading
    /// every user's version has cost too much lately (see `spend(_:)`).
    var notBefore: ContinuousClock.Instant
    /// The time reading users' versions cost lately, twenty times over, less the time since: checks
    /// wait while it is above `allowance`, so a long burst of pushes spends at most a twentieth of
    /// a core on them, and a few commits in a row are each seen at once.
    var debt = Duration.zero
    var debtSince: ContinuousClock.Instant
    let allowance = Duration.milliseconds(50)
    /// The checks after a burst of writes: the next one, the step to the one after, and when the last write came.
    var followUp: (next: ContinuousClock.Instant, step: Duration, write: ContinuousClock.Instant)?
    /// File events are not read before then (see `ExternalCommitWatcher.eventSpacing`).
    var eventsUnreadUntil: ContinuousClock.Instant

    init(
        connection: DatabaseQueue, notifier: ChangeNotifier, wakeUp: Int32, events: FileEvents?,
        fallbackInterval: Duration, dataVersion: Int, userVersions: [Int64: Int64]
    ) {
        self.connection = connection
        self.notifier = notifier
        self.wakeUp = wakeUp
        self.events = events
        self.fallbackInterval = fallbackInterval
        self.dataVersion = dataVersion
        self.userVersions = userVersions
        lastCheck = clock.now
        notBefore = lastCheck
        debtSince = lastCheck
        eventsUnreadUntil = lastCheck
    }

    /// How often to look without a write to follow up.
    var pollInterval: Duration {
        events == nil ? fallbackInterval : ExternalCommitWatcher.safetyInterval
    }

    func run() {
        defer {
            close(wakeUp)
            events?.close()
            try? connection.close()
        }
        while true {
            var deadline = lastCheck + pollInterval
            if let followUp { deadline = min(deadline, max(followUp.next, notBefore)) }
            var descriptors = [pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            if let events {
                if clock.now >= eventsUnreadUntil {
                    descriptors.append(pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0))
                } else {
                    deadline = min(deadline, eventsUnreadUntil)
                }
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), Self.milliseconds(until: deadline, clock: clock))
            if ready < 0, errno != EINTR {
                // Not expected; do not spin on it.
                usleep(10_000)
            }
            if descriptors[0].revents != 0 { return }
            if descriptors.count > 1, descriptors[1].revents != 0, let events {
                let batch = events.read()
                eventsUnreadUntil = clock.now + ExternalCommitWatcher.eventSpacing
                if batch != .irrelevant {
                    // Look at once, then again and again.
                    let now = clock.now
                    followUp = (now, .milliseconds(1), now)
                }
                if batch == .lost {
                    // The folder went away or the watch broke: from now on, look at intervals only.
                    events.close()
                    self.events = nil
                }
            }
            let now = clock.now
            if let scheduled = followUp, now >= max(scheduled.next, notBefore) {
                check()
                let next = now + scheduled.step
                var step = scheduled.step * 3 / 2
                if scheduled.write.duration(to: now) < ExternalCommitWatcher.closeFollowUp {
                    step = min(step, ExternalCommitWatcher.closeFollowUpStep)
                }
                let over = scheduled.write.duration(to: next) > ExternalCommitWatcher.followUpWindow
                followUp = over ? nil : (next, step, scheduled.write)
            } else if now >= lastCheck + pollInterval {
                check()
            }
        }
    }

    /// Notifies the users whose version counter went up, if anyone committed since the last check.
    private func check() {
        lastCheck = clock.now
        notBefore = max(notBefore, lastCheck + .milliseconds(1))
        do {
            // One statement, outside a transaction: it reads the file's state as it runs, and a
            // check comes every millisecond or two while this process itself writes.
            let newDataVersion = try connection.inDatabase { db in try ExternalCommitWatcher.dataVersion(db) }
            guard newDataVersion != dataVersion else { return }
            let newUserVersions = try connection.read { db in try ExternalCommitWatcher.userVersions(db) }
            for (userID, version) in newUserVersions where version > userVersions[userID, default: 0] {
                notifier.notify(userID: userID)
            }
            (dataVersion, userVersions) = (newDataVersion, newUserVersions)
            spend(lastCheck.duration(to: clock.now))
        } catch {
            // A busy or briefly unreadable file: look again next time.
        }
    }

    /// Counts `cost`, the time a check that read the users' versions took, against the budget.
    private func spend(_ cost: Duration) {
        let now = clock.now
        debt = max(.zero, debt - debtSince.duration(to: now)) + cost * 20
        debtSince = now
        notBefore = max(notBefore, now + (debt - allowance))
    }

    /// A `poll` timeout: the milliseconds until `deadline`, rounded up, so the wait does not end just before it.
    private static func milliseconds(until deadline: ContinuousClock.Instant, clock: ContinuousClock) -> Int32 {
        let left = clock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}

/// Writes to a database file and its `-wal` file, as inotify reports them for their folder;
/// `nil` where there is no inotify.
private final class FileEvents {
    let descriptor: Int32
    /// The names of the files whose writes count: the database and its `-wal` file.
    private let names: Set<String>
    /// Room for many events at once; each is a 16-byte header and a name padded to 4 bytes.
    private var buffer = [UInt8](repeating: 0, count: 16 * 1_024)

    enum Batch {
        /// A write to one of the files, or events were lost (the queue overflowed).
        case relevant
        case irrelevant
        /// The watch ended: the folder was removed or moved.
        case lost
    }

    init?(watching path: String) {
        #if canImport(Glibc)
            // SQLite opens the file a symbolic link points to, and puts the -wal file beside it.
            let file = URL(fileURLWithPath: path).resolvingSymlinksInPath()
            let folder = file.deletingLastPathComponent().path
            names = [file.lastPathComponent, file.lastPathComponent + "-wal"]
            descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            guard descriptor >= 0 else { return nil }
            let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
            guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
                Glibc.close(descriptor)
                return nil
            }
        #else
            return nil
        #endif
    }

    /// Reads every event queued and tells whether any of them counts.
    func read() -> Batch {
        #if canImport(Glibc)
            var batch = Batch.irrelevant
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { return batch }
                buffer.withUnsafeBytes { bytes in
                    var offset = 0
                    let header = MemoryLayout<inotify_event>.size
                    while offset + header <= count {
                        let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let nameBytes = bytes[(offset + header)..<min(offset + header + length, count)]
                        offset += header + length
                        if mask & UInt32(IN_IGNORED) != 0 {
                            batch = .lost
                        } else if batch == .irrelevant,
                            mask & UInt32(IN_Q_OVERFLOW) != 0
                                || names.contains(String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self))
                        {
                            batch = .relevant
                        }
                    }
                }
            }
        #else
            return .irrelevant
        #endif
    }

    func close() {
        #if canImport(Glibc)
            Glibc.close(descriptor)
        #endif
    }
}
