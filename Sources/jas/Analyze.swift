import ArgumentParser
import Foundation
import Measurement

/// `jas analyze`: the audio analyzer (measurement mode, headless). Its
/// measurements are subcommands; each prints a summary, or JSON Lines.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a path as an audio analyzer does: response, THD+N, noise and dynamic range (AES17), IMD, crosstalk.",
        discussion: """
            Each measurement is one session in measurement mode on --out/--in port pairs (the bit-exact direct \
            path). Levels are dBFS per AES17: a full-scale sine is 0 dBFS. Without --server a private headless \
            jackd with loopback ports is started and stopped. With --limits FILE (YAML), a verdict table \
            follows the figures. Exit status: 0 measured (and within the limits), 1 a figure outside its limits, \
            2 could not measure (xruns in every run, no signal on an input, a port that does not exist), with the \
            reason.
            """,
        subcommands: [AnalyzeResponse.self, AnalyzeTHD.self, AnalyzeNoise.self, AnalyzeIMD.self, AnalyzeCrosstalk.self,
                      AnalyzeAll.self]
    )
}
