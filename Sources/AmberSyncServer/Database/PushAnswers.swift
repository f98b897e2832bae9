import AmberSyncProtocol

/// The answers a push gave, kept in one row so that a re-sent mutation is answered as before: a
/// row per push, not per mutation (a row per mutation was a quarter of the server's time in a
/// first push of 100,000 records).
///
/// Both backends keep them in `amber_sync_push_answers`, keyed by user, client id and the
/// push's last mutation id, with its first mutation id, its results (``resultsText``: a JSON
/// array of ``MutationResult``s, in order) and the mutations' fingerprints (``fingerprintsText``:
/// a JSON array of the same length, of ``MutationFingerprint`` strings or `null` for an answer
/// kept before fingerprints were).
///
/// A row is forgotten once the client sends a push whose smallest id is above the row's last:
/// the client then has every answer of it. Answers share their row's fate, so one below such a
/// push's smallest id may stay while its row holds a newer one; a retry of it is answered as
/// before rather than refused, and a different mutation under its id is still refused.
///
/// ```swift
/// var answers = PushAnswers()
/// answers.append(result, fingerprint: fingerprint)     // for each mutation the push decided
/// // store answers.firstMutationID, .lastMutationID, .resultsText and .fingerprintsText
/// let kept = try PushAnswers.read(results: text, fingerprints: prints)  // [mutationID: (result, fingerprint)]
/// ```
package struct PushAnswers: Sendable {
    /// The results, in the order of their mutations.
    package private(set) var results: [MutationResult] = []
    /// The fingerprint of each result's mutation.
    package private(set) var fingerprints: [String?] = []

    package init() {}

    /// Whether the push decided no mutation (each was answered before): nothing to keep.
    package var isEmpty: Bool { results.isEmpty }

    /// The first mutation id answered.
    package var firstMutationID: Int64? { results.first?.mutationID }
    /// The last mutation id answered: the row's key.
    package var lastMutationID: Int64? { results.last?.mutationID }

    /// Adds the answer to the next mutation, whose id is above those before it.
    package mutating func append(_ result: MutationResult, fingerprint: String?) {
        precondition(
            results.last.map { $0.mutationID < result.mutationID } ?? true, "Answers are kept in mutation id order.")
        results.append(result)
        fingerprints.append(fingerprint)
    }

    /// The results as a JSON array, written as the protocol writes them.
    package var resultsText: String {
        var writer = JSONWriter(capacity: results.count * 64)
        writer.raw("[")
        for (offset, result) in results.enumerated() {
            if offset > 0 { writer.raw(",") }
            result.write(to: &writer)
        }
        writer.raw("]")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The fingerprints as a JSON array of strings and `null`s.
    package var fingerprintsText: String {
        var writer = JSONWriter(capacity: fingerprints.count * 67)
        writer.raw("[")
        for (offset, fingerprint) in fingerprints.enumerated() {
            if offset > 0 { writer.raw(",") }
            if let fingerprint { writer.write(fingerprint) } else { writer.raw("null") }
        }
        writer.raw("]")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The answers a row keeps, by mutation id.
    ///
    /// - Parameters:
    ///   - results: The row's results, as ``resultsText`` wrote them.
    ///   - fingerprints: The row's fingerprints, as ``fingerprintsText`` wrote them.
    /// - Throws: `JSONWireError` or ``PushAnswersError`` for a row that is not what
    ///   ``resultsText`` and ``fingerprintsText`` wrote (altered behind the server's back).
    package static func read(results: String, fingerprints: String) throws -> [Int64:
        (result: MutationResult, fingerprint: String?)]
    {
        // Read exactly, as the protocol reads an answer: a number keeps its digits.
        guard case .array(let resultValues) = try JSONReader.value(from: results.utf8),
            case .array(let printValues) = try JSONReader.value(from: fingerprints.utf8),
            printValues.count == resultValues.count
        else { throw PushAnswersError(results: results.utf8.count, fingerprints: fingerprints.utf8.count) }
        var answers: [Int64: (result: MutationResult, fingerprint: String?)] = [:]
        answers.reserveCapacity(resultValues.count)
        for (index, (value, print)) in zip(resultValues, printValues).enumerated() {
            let result = try MutationResult(json: value, path: [.index(index)])
            switch print {
            case .string(let fingerprint): answers[result.mutationID] = (result, fingerprint)
            case .null: answers[result.mutationID] = (result, nil)
            default: throw PushAnswersError(results: results.utf8.count, fingerprints: fingerprints.utf8.count)
            }
        }
        return answers
    }
}

/// A kept row of push answers whose fingerprints do not match its results.
package struct PushAnswersError: Error, CustomStringConvertible {
    let results: Int
    let fingerprints: Int

    package var description: String {
        "a row of amber_sync_push_answers does not hold one fingerprint per result "
            + "(results \(results) bytes, fingerprints \(fingerprints) bytes)"
    }
}
