import CKissFFT
import Glibc

/// The discrete Fourier transform of a block of real samples, through
/// KissFFT's real-input transform (`kiss_fftr`, single precision, as Debian
/// builds it). One plan per length, made once and kept: the analyses run
/// many blocks of the same length. Not for the real-time thread.
public final class RealFFT {
    /// Samples per block: even, and best a product of small primes (48000 =
    /// 2⁷·3·5³ is; KissFFT is slow on large prime factors).
    public let length: Int
    private let plan: kiss_fftr_cfg
    private var input: [Float]
    private var output: [kiss_fft_cpx]

    /// A transform of `length` samples (even, at least 2).
    public init(length: Int) {
        precondition(length >= 2 && length % 2 == 0, "KissFFT's real transform takes an even length, not \(length)")
        self.length = length
        guard let plan = kiss_fftr_alloc(Int32(length), 0, nil, nil) else {
            preconditionFailure("KissFFT could not make a plan for \(length) samples")
        }
        self.plan = plan
        input = [Float](repeating: 0, count: length)
        output = [kiss_fft_cpx](repeating: kiss_fft_cpx(r: 0, i: 0), count: length / 2 + 1)
    }

    // kiss_fftr_free is a macro for free(3).
    deinit { free(UnsafeMutableRawPointer(plan)) }

    /// The spectrum of `samples` (exactly `length` of them): for each bin
    /// 0...length/2, its real and imaginary parts scaled so that a sinusoid
    /// of peak amplitude A on a bin other than 0 and length/2 has magnitude A.
    public func spectrum(_ samples: ArraySlice<Float>) -> [(re: Double, im: Double)] {
        precondition(samples.count == length, "\(samples.count) samples for a transform of \(length)")
        input.withUnsafeMutableBufferPointer { buffer in
            _ = buffer.update(fromContentsOf: samples)
        }
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                kiss_fftr(plan, source.baseAddress, destination.baseAddress)
            }
        }
        let scale = 2 / Double(length)
        return output.enumerated().map { bin, value in
            let edge = bin == 0 || bin == length / 2
            let factor = edge ? scale / 2 : scale
            return (Double(value.r) * factor, Double(value.i) * factor)
        }
    }
}
