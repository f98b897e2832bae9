import Testing

/// The samples of a Prometheus text exposition, keyed by name and labels as written
/// (`name{label="value",...}`); comment lines are checked to be `# HELP` or `# TYPE`.
func parsePrometheusText(_ text: String) throws -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") {
        if line.hasPrefix("#") {
            #expect(line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE "), "unexpected comment: \(line)")
            continue
        }
        // Label values here hold no spaces: the value follows the last space.
        let space = try #require(line.lastIndex(of: " "), "a sample without a value: \(line)")
        let value = try #require(
            Double(line[line.index(after: space)...]), "a sample whose value is not a number: \(line)")
        let key = String(line[..<space])
        #expect(samples[key] == nil, "a sample given twice: \(key)")
        samples[key] = value
    }
    return samples
}
