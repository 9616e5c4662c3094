import ArgumentParser
import AudioSession

/// `--category`, `--mode` and `--option`, shared by the commands that open a session.
struct SessionOptions: ParsableArguments {
    @Option(help: "Category: \(Category.allCases.map(\.rawValue).joined(separator: ", ")).")
    var category: String = "playback"

    @Option(help: "Mode: \(Mode.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mode: String = "default"

    @Option(name: .customLong("option"), help: "Category option (repeatable): \(CategoryOptions.named.map(\.name).joined(separator: ", ")).")
    var options: [String] = []

    func validate() throws {
        _ = try resolved()
    }

    /// The parsed category, mode and options.
    func resolved() throws -> (Category, Mode, CategoryOptions) {
        guard let category = Category(rawValue: category) else {
            throw ValidationError("unknown category '\(category)'; use one of \(Category.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let mode = Mode(rawValue: mode) else {
            throw ValidationError("unknown mode '\(mode)'; use one of \(Mode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var set = CategoryOptions()
        for name in options {
            guard let option = CategoryOptions(name: name) else {
                throw ValidationError("unknown option '\(name)'; use \(CategoryOptions.named.map(\.name).joined(separator: ", "))")
            }
            set.formUnion(option)
        }
        return (category, mode, set)
    }
}
