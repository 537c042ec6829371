/// What `results summary` and `results tokens` refuse: results files that cannot be read, or
/// that belong to different runs.
extension BulkRunError {
    /// The results file at `path` cannot be opened or read (`reason`).
    public static func resultsCannotBeRead(
        path: String,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        BulkRunError(
            .resultsUnreadable,
            path: path,
            "The results file cannot be read (\(reason)).",
            hint: "Give the results files a bulk run wrote, by their paths.",
            file: file,
            line: line
        )
    }

    /// The results file at `path` has no run header (its results were printed to standard
    /// output), so it cannot be told to belong to the same run as the other files given.
    public static func noRunHeaderToCompare(path: String, file: String = #fileID, line: UInt = #line) -> BulkRunError {
        BulkRunError(
            .notAResultsFile,
            path: path,
            "This results file has no run header, so it cannot be told to belong to the same run as the other files.",
            hint: "Give it alone, or give only the results files of one run.",
            file: file,
            line: line
        )
    }

    /// The results file at `path` belongs to another run than `first`'s: `differences` in
    /// words ("the payload"...), as a resume names them.
    public static func runsDiffer(
        path: String,
        first: String,
        differences: [String],
        file: String = #fileID,
        line: UInt = #line
    ) -> BulkRunError {
        let verb = differences.count == 1 ? "differs" : "differ"
        return BulkRunError(
            .runsDiffer,
            path: path,
            "This results file belongs to another run than \(first): \(differences.joined(separator: ", ")) \(verb). Nothing was counted.",
            hint: "Give the results files of one run: the one file of a run, or the files of its shards.",
            file: file,
            line: line
        )
    }
}
