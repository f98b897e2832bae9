// The exact JSON form of the wire types: what client and server send and read. The `Codable`
// conformances stay for apps and tools; they read numbers through `Double`.

/// The members of one JSON object, read with errors that name the field.
struct JSONFields {
    let members: [String: JSONValue]
    let path: [JSONPathComponent]

    init(_ json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        guard case .object(let members) = json else {
            throw .field(path: path, problem: "must be a JSON object")
        }
        self.members = members
        self.path = path
    }

    func error(_ key: String, _ problem: String) -> JSONWireError {
        .field(path: path + [.key(key)], problem: problem)
    }

    /// The member, neither absent nor `null`.
    func required(_ key: String) throws(JSONWireError) -> JSONValue {
        guard let value = members[key] else { throw error(key, "is missing") }
        if case .null = value { throw error(key, "must not be null") }
        return value
    }

    /// The member, or `nil` when absent or `null`.
    func optional(_ key: String) -> JSONValue? {
        guard let value = members[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func string(_ key: String) throws(JSONWireError) -> String {
        guard case .string(let text) = try required(key) else { throw error(key, "must be a string") }
        return text
    }

    func optionalString(_ key: String) throws(JSONWireError) -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value else { throw error(key, "must be a string") }
        return text
    }

    func int64(_ key: String) throws(JSONWireError) -> Int64 {
        try int64(try required(key), key: key)
    }

    func optionalInt64(_ key: String) throws(JSONWireError) -> Int64? {
        guard let value = optional(key) else { return nil }
        return try int64(value, key: key)
    }

    /// An integer written without fraction or exponent that fits `Int64` (`-0` counts as 0).
    private func int64(_ value: JSONValue, key: String) throws(JSONWireError) -> Int64 {
        switch value {
        case .integer(let integer):
            return integer
        case .number(let number):
            if let integer = number.int64Value { return integer }
            throw error(
                key,
                "must be an integer from \(Int64.min) to \(Int64.max), written without fraction or exponent, not \(number.text)"
            )
        default:
            throw error(key, "must be an integer, not \(value.kindDescription)")
        }
    }

    func bool(_ key: String) throws(JSONWireError) -> Bool {
        guard case .bool(let value) = try required(key) else { throw error(key, "must be true or false") }
        return value
    }

    func optionalBool(_ key: String) throws(JSONWireError) -> Bool? {
        guard let value = optional(key) else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "must be true or false") }
        return flag
    }

    func optionalObject(_ key: String) throws(JSONWireError) -> JSONObject? {
        guard let value = optional(key) else { return nil }
        guard case .object(let members) = value else { throw error(key, "must be a JSON object or null") }
        return members
    }

    func optionalStrings(_ key: String) throws(JSONWireError) -> [String]? {
        guard let value = optional(key) else { return nil }
        guard case .array(let elements) = value else { throw error(key, "must be an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw .field(path: path + [.key(key), .index(index)], problem: "must be a string")
            }
            strings.append(text)
        }
        return strings
    }

    func array(_ key: String) throws(JSONWireError) -> [JSONValue] {
        guard case .array(let elements) = try required(key) else { throw error(key, "must be an array") }
        return elements
    }

    /// The elements of the array `key`, each read as `Element`.
    func array<Element: JSONWireDecodable>(_ key: String, of type: Element.Type) throws(JSONWireError) -> [Element] {
        let elements = try array(key)
        var values: [Element] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            values.append(try Element(json: element, path: path + [.key(key), .index(index)]))
        }
        return values
    }
}

extension JSONValue {
    /// "a string", "an array", ...: what a value of the wrong type is, for error sentences.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension PushRequest: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        Self.write(clientID: clientID, cursor: cursor, cursorTag: cursorTag, to: &writer) {
            $0.writeElements(mutations)
        }
    }

    /// Writes a push as ``write(to:)`` does, its mutations written by `mutations` (the elements
    /// of the array only, as ``JSONWriter/writeElements(_:)`` writes them): a client whose outbox
    /// holds its mutations' text sends it without writing them again.
    package static func write(
        clientID: String, cursor: Int64?, cursorTag: String?, to writer: inout JSONWriter,
        mutations: (inout JSONWriter) -> Void
    ) {
        writer.raw(#"{"clientID":"#)
        writer.write(clientID)
        writer.raw(#","mutations":["#)
        mutations(&writer)
        writer.raw("]")
        if let cursor {
            writer.raw(#","cursor":"#)
            writer.write(cursor)
        }
        if let cursorTag {
            writer.raw(#","cursorTag":"#)
            writer.write(cursorTag)
        }
        writer.raw("}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(
            clientID: try fields.string("clientID"), mutations: try fields.array("mutations", of: Mutation.self),
            cursor: try fields.optionalInt64("cursor"), cursorTag: try fields.optionalString("cursorTag"))
    }

    /// Reads a push without reading its records' trees: each is checked, and kept as its text
    /// when that is the protocol's own form (see ``JSONReader/Parser/readCanonicalRecord(at:)``).
    package init(jsonBytes bytes: some Collection<UInt8>) throws(JSONWireError) {
        let (members, mutations) = try JSONReader.objectWithArray(bytes, key: "mutations") {
            parser, path throws(JSONWireError) in try Mutation(reading: &parser, at: path)
        }
        let fields = try JSONFields(.object(members), path: [])
        self.init(
            clientID: try fields.string("clientID"), mutations: mutations,
            cursor: try fields.optionalInt64("cursor"), cursorTag: try fields.optionalString("cursorTag"))
    }
}

/// Mutations kept together as one text, `{"mutations":[...]}`, each written as a push carries it:
/// the form of a client's outbox rows.
package struct MutationRun: Sendable, Equatable, JSONWireEncodable {
    package let mutations: [Mutation]
    /// Whether the run was written without its mutations' values (``textWithoutValues(_:)``):
    /// each is `null` here, and kept where the run's reader finds it.
    package let valuesKeptApart: Bool

    package init(_ mutations: [Mutation], valuesKeptApart: Bool = false) {
        self.mutations = mutations
        self.valuesKeptApart = valuesKeptApart
    }

    /// The member that marks a run written without its values. A reader that does not know it
    /// refuses the run (it holds only `"mutations"`), rather than take each `null` for a deletion.
    private static let valuesApartMember = (name: "values", value: "apart")

    /// The text of a run of `mutations` written without their values, each `null`, and marked
    /// as such: `{"mutations":[...],"values":"apart"}`.
    package static func textWithoutValues(_ mutations: ArraySlice<Mutation>) -> String {
        var writer = JSONWriter(capacity: mutations.count * 128 + 32)
        writer.raw(#"{"mutations":["#)
        for index in mutations.indices {
            if index > mutations.startIndex { writer.raw(",") }
            mutations[index].write(to: &writer, value: nil)
        }
        writer.raw("],")
        writer.write(valuesApartMember.name)
        writer.raw(":")
        writer.write(valuesApartMember.value)
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Whether `text` is a run rather than a single mutation.
    package static func isRun(_ text: String) -> Bool {
        text.utf8.starts(with: #"{"mutations":"#.utf8)
    }

    package func write(to writer: inout JSONWriter) {
        Self.write(to: &writer) { $0.writeElements(mutations) }
    }

    /// The text of a run whose mutations are `elements`, written as
    /// ``JSONWriter/writeElements(_:)`` writes them: the same as ``JSONWriter/text(of:)``.
    package static func text(elements: some Collection<UInt8>) -> String {
        var writer = JSONWriter(capacity: elements.count + 16)
        write(to: &writer) { $0.rawBytes(elements) }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func write(to writer: inout JSONWriter, elements: (inout JSONWriter) -> Void) {
        writer.raw(#"{"mutations":["#)
        elements(&writer)
        writer.raw("]}")
    }

    /// Reads a run as a push's mutations are read.
    package init(jsonBytes bytes: some Collection<UInt8>) throws(JSONWireError) {
        let (members, mutations) = try JSONReader.objectWithArray(bytes, key: "mutations") {
            parser, path throws(JSONWireError) in try Mutation(reading: &parser, at: path)
        }
        if members.isEmpty {
            self.init(mutations)
        } else if members.count == 1, members[Self.valuesApartMember.name] == .string(Self.valuesApartMember.value) {
            self.init(mutations, valuesKeptApart: true)
        } else {
            throw JSONWireError.field(
                path: [], problem: "a run of mutations holds only \"mutations\" and the mark of values kept apart")
        }
    }
}

extension Mutation: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        write(to: &writer, value: record)
    }

    /// Writes the mutation with `value` in place of its record.
    fileprivate func write(to writer: inout JSONWriter, value: JSONRecord?) {
        writer.raw(#"{"baseVersion":"#)
        writer.write(baseVersion)
        writer.raw(#","collection":"#)
        writer.write(collection)
        if let fields {
            writer.raw(#","fields":"#)
            writer.write(fields)
        }
        writer.raw(#","id":"#)
        writer.write(id)
        writer.raw(#","mutationID":"#)
        writer.write(mutationID)
        writer.raw(#","value":"#)
        writer.write(value)
        writer.raw("}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let members = try JSONFields(json, path: path)
        self.init(
            mutationID: try members.int64("mutationID"),
            collection: try members.string("collection"),
            id: try members.string("id"),
            baseVersion: try members.optionalInt64("baseVersion"),
            value: try members.optionalObject("value"),
            fields: try members.optionalStrings("fields")
        )
    }

    /// Reads the mutation at the parser's index, its record kept as text in the protocol's form.
    init(reading parser: inout JSONReader.Parser, at path: [JSONPathComponent]) throws(JSONWireError) {
        let start = parser.index
        if let mutation = try Self.readPlain(&parser, at: path) {
            self = mutation
            return
        }
        parser.index = start
        var record: JSONRecord?
        let members = try parser.readObject(at: path, special: ["value"]) { parser, _ throws(JSONWireError) in
            record = try parser.readCanonicalRecord(at: path + [.key("value")])
        }
        let fields = try JSONFields(.object(members), path: path)
        self.init(
            mutationID: try fields.int64("mutationID"),
            collection: try fields.string("collection"),
            id: try fields.string("id"),
            baseVersion: try fields.optionalInt64("baseVersion"),
            record: record,
            fields: try fields.optionalStrings("fields")
        )
    }
}

extension JSONReader.Parser {
    /// Reads the object at the index member by member, without a dictionary of its members, when
    /// it is plain: each key without escapes, handed as its bytes with the parser at its value to
    /// `member`, which reads the value and returns `true`, or returns `false` for a key or a value
    /// it does not take. `false`, the index left anywhere, for any other text (not an object, an
    /// escaped key), which a full reading then accepts or refuses with its own error.
    mutating func readPlainObject(
        _ member: (UnsafeRawBufferPointer, inout Self) throws(JSONWireError) -> Bool
    ) throws(JSONWireError) -> Bool {
        skipWhitespace()
        guard bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        skipWhitespace()
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            index += 1  // the opening quote
            let keyStart = index
            while bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
            guard bytes[index] == UInt8(ascii: "\"") else { return false }
            let key = UnsafeRawBufferPointer(rebasing: bytes[keyStart..<index])
            index += 1
            skipWhitespace()
            index += 1  // the colon
            guard try member(key, &self) else { return false }
            skipWhitespace()
            let separator = bytes[index]
            index += 1
            if separator != UInt8(ascii: ",") { return true }
        }
    }

    /// Whether a key's bytes are `name`.
    static func key(_ bytes: UnsafeRawBufferPointer, is name: StaticString) -> Bool {
        name.withUTF8Buffer { name in name.count == bytes.count && name.elementsEqual(bytes) }
    }

    /// Reads the integer at the index into `member`, a member not read before; `false` (the
    /// index left anywhere) when `member` was read already or the value is not such an integer.
    mutating func readOnce(_ member: inout Int64?) -> Bool {
        guard member == nil, case .integer(let value)? = try? readValue() else { return false }
        member = value
        return true
    }

    /// Reads the string at the index into `member`, as ``readOnce(_:)-(Int64?)`` reads an integer.
    mutating func readOnce(_ member: inout String?) -> Bool {
        guard member == nil, case .string(let value)? = try? readValue() else { return false }
        member = value
        return true
    }
}

extension Mutation {
    /// Reads the mutation at the parser's index as ``init(reading:at:)`` does, without a
    /// dictionary of its members (``JSONReader/Parser/readPlainObject(_:)``), when it is plain:
    /// only a mutation's members, each once, each value of its type. `nil`, the index left
    /// anywhere, for any other text; a record that cannot be read throws as it would there.
    private static func readPlain(_ parser: inout JSONReader.Parser, at path: [JSONPathComponent])
        throws(JSONWireError) -> Mutation?
    {
        var (mutationID, collection, id): (Int64?, String?, String?) = (nil, nil, nil)
        var baseVersion: Int64??
        var fields: [String]??
        var record: JSONRecord??
        let plain = try parser.readPlainObject { key, parser throws(JSONWireError) in
            typealias Parser = JSONReader.Parser
            if Parser.key(key, is: "value") {
                guard record == nil else { return false }
                record = .some(try parser.readCanonicalRecord(at: path + [.key("value")]))
            } else if Parser.key(key, is: "mutationID") {
                return parser.readOnce(&mutationID)
            } else if Parser.key(key, is: "collection") {
                return parser.readOnce(&collection)
            } else if Parser.key(key, is: "id") {
                return parser.readOnce(&id)
            } else if Parser.key(key, is: "baseVersion") {
                guard baseVersion == nil else { return false }
                switch try? parser.readValue() {
                case .integer(let value)?: baseVersion = .some(value)
                case .null?: baseVersion = .some(nil)
                default: return false
                }
            } else if Parser.key(key, is: "fields") {
                guard fields == nil else { return false }
                switch try? parser.readValue() {
                case .array(let elements)?:
                    var strings: [String] = []
                    for case .string(let text) in elements { strings.append(text) }
                    guard strings.count == elements.count else { return false }
                    fields = .some(strings)
                case .null?: fields = .some(nil)
                default: return false
                }
            } else {
                return false
            }
            return true
        }
        guard plain, let mutationID, let collection, let id else { return nil }
        return Mutation(
            mutationID: mutationID, collection: collection, id: id, baseVersion: baseVersion ?? nil,
            record: record ?? nil, fields: fields ?? nil)
    }
}

extension RecordChange {
    /// Reads the change at the parser's index as ``init(reading:at:)`` does, without a dictionary
    /// of its members (``JSONReader/Parser/readPlainObject(_:)``), when it is plain: only a
    /// change's members, each once, each value of its type. `nil`, the index left anywhere, for
    /// any other text; a record that cannot be read throws as it would there.
    private static func readPlain(_ parser: inout JSONReader.Parser, at path: [JSONPathComponent])
        throws(JSONWireError) -> RecordChange?
    {
        var (collection, id, version): (String?, String?, Int64?) = (nil, nil, nil)
        var record: JSONRecord??
        let plain = try parser.readPlainObject { key, parser throws(JSONWireError) in
            typealias Parser = JSONReader.Parser
            if Parser.key(key, is: "value") {
                guard record == nil else { return false }
                record = .some(try parser.readRecord(at: path + [.key("value")]))
                return true
            } else if Parser.key(key, is: "collection") {
                return parser.readOnce(&collection)
            } else if Parser.key(key, is: "id") {
                return parser.readOnce(&id)
            } else if Parser.key(key, is: "version") {
                return parser.readOnce(&version)
            }
            return false
        }
        guard plain, let collection, let id, let version else { return nil }
        return RecordChange(collection: collection, id: id, version: version, record: record ?? nil)
    }
}

extension MutationResult {
    /// Reads the result at the parser's index without a dictionary of its members when it holds
    /// only a mutation id, a status and a version, each once and of its type (the answer to a
    /// mutation stored as sent); `nil`, the index left anywhere, for any other text, which a
    /// reading of its tree then accepts or refuses.
    static func readPlain(_ parser: inout JSONReader.Parser) throws(JSONWireError) -> MutationResult? {
        var (mutationID, status, version): (Int64?, String?, Int64?) = (nil, nil, nil)
        let plain = try parser.readPlainObject { key, parser in
            typealias Parser = JSONReader.Parser
            if Parser.key(key, is: "mutationID") { return parser.readOnce(&mutationID) }
            if Parser.key(key, is: "status") { return parser.readOnce(&status) }
            if Parser.key(key, is: "version") { return parser.readOnce(&version) }
            return false
        }
        guard plain, let mutationID, let status = status.flatMap(Status.init(rawValue:)), let version else {
            return nil
        }
        return MutationResult(mutationID: mutationID, status: status, version: version)
    }
}

extension PushResponse: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw(#"{"results":["#)
        writer.writeElements(results)
        writer.raw("]")
        if let cursor {
            writer.raw(#","cursor":"#)
            writer.write(cursor)
        }
        if let cursorTag {
            writer.raw(#","cursorTag":"#)
            writer.write(cursorTag)
        }
        writer.raw("}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(
            results: try fields.array("results", of: MutationResult.self), cursor: try fields.optionalInt64("cursor"),
            cursorTag: try fields.optionalString("cursorTag"))
    }

    /// Reads an answer result by result, without a tree of each (``MutationResult/readPlain(_:)``)
    /// unless it carries a value or fields.
    package init(jsonBytes bytes: some Collection<UInt8>) throws(JSONWireError) {
        let (members, results) = try JSONReader.objectWithArray(bytes, key: "results") {
            parser, path throws(JSONWireError) in
            let start = parser.index
            if let result = try MutationResult.readPlain(&parser) { return result }
            parser.index = start
            return try MutationResult(json: try parser.readValue(), path: path)
        }
        let fields = try JSONFields(.object(members), path: [])
        self.init(
            results: results, cursor: try fields.optionalInt64("cursor"),
            cursorTag: try fields.optionalString("cursorTag"))
    }
}

extension MutationResult: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{")
        if let fields {
            writer.raw(#""fields":"#)
            writer.write(fields)
            writer.raw(",")
        }
        writer.raw(#""mutationID":"#)
        writer.write(mutationID)
        writer.raw(#","status":"#)
        writer.write(status.rawValue)
        // A conflict always says what the server has, `null` for a deleted record.
        if status == .conflict || value != nil {
            writer.raw(#","value":"#)
            writer.write(value)
        }
        writer.raw(#","version":"#)
        writer.write(version)
        writer.raw("}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let members = try JSONFields(json, path: path)
        guard let status = Status(rawValue: try members.string("status")) else {
            throw members.error("status", #"must be "applied" or "conflict""#)
        }
        self.init(
            mutationID: try members.int64("mutationID"),
            status: status,
            version: try members.int64("version"),
            value: try members.optionalObject("value"),
            fields: try members.optionalStrings("fields")
        )
    }
}

extension PullResponse: JSONWireEncodable, JSONWireDecodable {
    /// About the length of the answer's JSON text: its records' text and each change's other fields.
    package var estimatedJSONByteCount: Int {
        changes.reduce(128) { sum, change in
            sum + (change.record?.text.utf8.count ?? 0) + change.collection.utf8.count + change.id.utf8.count + 80
        }
    }

    package func write(to writer: inout JSONWriter) {
        writer.raw(#"{"changes":["#)
        writer.writeElements(changes)
        writer.raw(#"],"cursor":"#)
        writer.write(cursor)
        if let cursorTag {
            writer.raw(#","cursorTag":"#)
            writer.write(cursorTag)
        }
        writer.raw(#","hasMore":"#)
        writer.write(hasMore)
        if let total {
            writer.raw(#","total":"#)
            writer.write(total)
        }
        writer.raw("}")
    }

    /// Reads a pull answer without reading its records' trees: each is checked and kept as text.
    package init(jsonBytes bytes: some Collection<UInt8>) throws(JSONWireError) {
        let (members, changes) = try JSONReader.objectWithArray(bytes, key: "changes") {
            parser, path throws(JSONWireError) in try RecordChange(reading: &parser, at: path)
        }
        let fields = try JSONFields(.object(members), path: [])
        self.init(
            changes: changes,
            cursor: try fields.int64("cursor"),
            hasMore: try fields.bool("hasMore"),
            cursorTag: try fields.optionalString("cursorTag"),
            total: try fields.optionalInt64("total")
        )
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(
            changes: try fields.array("changes", of: RecordChange.self),
            cursor: try fields.int64("cursor"),
            hasMore: try fields.bool("hasMore"),
            cursorTag: try fields.optionalString("cursorTag"),
            total: try fields.optionalInt64("total")
        )
    }
}

extension RecordChange: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw(#"{"collection":"#)
        writer.write(collection)
        writer.raw(#","id":"#)
        writer.write(id)
        writer.raw(#","value":"#)
        writer.write(record)
        writer.raw(#","version":"#)
        writer.write(version)
        writer.raw("}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(
            collection: try fields.string("collection"),
            id: try fields.string("id"),
            version: try fields.int64("version"),
            value: try fields.optionalObject("value")
        )
    }

    /// Reads the change at the parser's index, its record kept as text.
    init(reading parser: inout JSONReader.Parser, at path: [JSONPathComponent]) throws(JSONWireError) {
        let start = parser.index
        if let change = try Self.readPlain(&parser, at: path) {
            self = change
            return
        }
        parser.index = start
        var record: JSONRecord?
        let members = try parser.readObject(at: path, special: ["value"]) { parser, _ throws(JSONWireError) in
            record = try parser.readRecord(at: path + [.key("value")])
        }
        let fields = try JSONFields(.object(members), path: path)
        self.init(
            collection: try fields.string("collection"),
            id: try fields.string("id"),
            version: try fields.int64("version"),
            record: record
        )
    }
}

extension ErrorResponse: JSONWireEncodable, JSONWireDecodable {
    package func write(to writer: inout JSONWriter) {
        if let code {
            writer.raw(#"{"code":"#)
            writer.write(code)
            writer.raw(#","error":"#)
        } else {
            writer.raw(#"{"error":"#)
        }
        writer.write(error)
        if let reset {
            writer.raw(#","reset":"#)
            writer.write(reset)
        }
        writer.raw("}")
    }

    package init(json: JSONValue, path: [JSONPathComponent]) throws(JSONWireError) {
        let fields = try JSONFields(json, path: path)
        self.init(
            error: try fields.string("error"), reset: try fields.optionalBool("reset"),
            code: try fields.optionalString("code"))
    }
}

extension HealthResponse: JSONWireEncodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw(#"{"protocolVersion":"#)
        writer.write(Int64(protocolVersion))
        writer.raw(#","status":"#)
        writer.write(status)
        writer.raw("}")
    }
}

extension JSONReader {
    /// Reads a JSON object whose member `key` is an array read element by element with
    /// `element` (given the element's path), and whose other members are read as values: an
    /// answer or a request whose records stay text. The whole text is checked first.
    static func objectWithArray<Element>(
        _ bytes: some Collection<UInt8>, key: String,
        _ element: (inout Parser, [JSONPathComponent]) throws(JSONWireError) -> Element
    ) throws(JSONWireError) -> (members: [String: JSONValue], elements: [Element]) {
        func read(_ bytes: UnsafeRawBufferPointer) throws(JSONWireError) -> ([String: JSONValue], [Element]) {
            try JSONSyntax.validate(bytes)
            var parser = Parser(bytes: bytes)
            var elements: [Element]?
            let members = try parser.readObject(at: [], special: [key]) { parser, _ throws(JSONWireError) in
                var read: [Element] = []
                try parser.readArray(at: [.key(key)]) { parser, index throws(JSONWireError) in
                    read.append(try element(&parser, [.key(key), .index(index)]))
                }
                elements = read
            }
            guard let elements else { throw .field(path: [.key(key)], problem: "is missing") }
            return (members, elements)
        }
        let result =
            bytes.withContiguousStorageIfAvailable { buffer in
                Result { () throws(JSONWireError) in try read(UnsafeRawBufferPointer(buffer)) }
            }
            ?? Array(bytes).withUnsafeBytes { buffer in
                Result { () throws(JSONWireError) in try read(buffer) }
            }
        return try result.get()
    }
}
