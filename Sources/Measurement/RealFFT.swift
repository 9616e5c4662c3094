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
    private var inversePlan: kiss_fftr_cfg?
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
    deinit {
        free(UnsafeMutableRawPointer(plan))
        if let inversePlan { free(UnsafeMutableRawPointer(inversePlan)) }
    }

    /// The transform of `samples` (exactly `length` of them), unscaled: bin
    /// 0...length/2, as `inverse` takes it back.
    public func transform(_ samples: ArraySlice<Float>) -> [(re: Double, im: Double)] {
        precondition(samples.count == length, "\(samples.count) samples for a transform of \(length)")
        input.withUnsafeMutableBufferPointer { buffer in
            _ = buffer.update(fromContentsOf: samples)
        }
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                kiss_fftr(plan, source.baseAddress, destination.baseAddress)
            }
        }
        return output.map { (Double($0.r), Double($0.i)) }
    }

    /// The samples whose `transform` is `bins` (length/2 + 1 of them).
    public func inverse(_ bins: [(re: Double, im: Double)]) -> [Double] {
        precondition(bins.count == length / 2 + 1, "\(bins.count) bins for a transform of \(length)")
        if inversePlan == nil { inversePlan = kiss_fftr_alloc(Int32(length), 1, nil, nil) }
        guard let inversePlan else { preconditionFailure("KissFFT could not make an inverse plan for \(length) samples") }
        let spectrum = bins.map { kiss_fft_cpx(r: Float($0.re), i: Float($0.im)) }
        var samples = [Float](repeating: 0, count: length)
        spectrum.withUnsafeBufferPointer { source in
            samples.withUnsafeMutableBufferPointer { destination in
                kiss_fftri(inversePlan, source.baseAddress, destination.baseAddress)
            }
        }
        return samples.map { Double($0) / Double(length) }
    }

    /// The smallest length of at least `count` samples whose only prime
    /// factors are 2, 3 and 5 (KissFFT's fast radices), even.
    public static func smoothLength(atLeast count: Int) -> Int {
        var best = Int.max
        var two = 2
        while two < 2 * max(count, 2) {
            var three = two
            while three < 2 * max(count, 2) {
                var five = three
                while five < count { five *= 5 }
                best = min(best, five)
                three *= 3
            }
            two *= 2
        }
        return best
    }

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
