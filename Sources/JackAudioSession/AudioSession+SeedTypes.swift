/// The seeds' qualified names: AVAudioSession nests its types
/// (`AVAudioSession.Category`, `.Mode`, `.CategoryOptions`, ...), so code
/// ported from them writes `AudioSession.Category` and means the same types
/// as the module's own (`Category`, `Mode`, ...).
extension AudioSession {
    /// `AVAudioSession.Category`.
    public typealias Category = JackAudioSession.Category
    /// `AVAudioSession.Mode`.
    public typealias Mode = JackAudioSession.Mode
    /// `AVAudioSession.CategoryOptions`.
    public typealias CategoryOptions = JackAudioSession.CategoryOptions
    /// `AVAudioSession.SetActiveOptions`.
    public typealias SetActiveOptions = JackAudioSession.SetActiveOptions
    /// `AVAudioSession.RouteChangeReason`.
    public typealias RouteChangeReason = JackAudioSession.RouteChangeReason
    /// `AVAudioSession.InterruptionType`.
    public typealias InterruptionType = JackAudioSession.InterruptionType
    /// `AVAudioSession.InterruptionOptions`.
    public typealias InterruptionOptions = JackAudioSession.InterruptionOptions
    /// `AVAudioSession.SilenceSecondaryAudioHintType`.
    public typealias SilenceSecondaryAudioHintType = JackAudioSession.SilenceSecondaryAudioHintType
    /// `AVAudioSession.PortOverride`.
    public typealias PortOverride = JackAudioSession.PortOverride
    /// `AVAudioSession.RecordPermission`.
    public typealias RecordPermission = JackAudioSession.RecordPermission
    /// `AVAudioSession.ErrorCode`: the codes of `AudioSessionError`.
    public typealias ErrorCode = AudioSessionError.Code
    /// `AVAudioSession.Port`: a device's type (`.builtInMic`, `.headphones`, ...).
    public typealias Port = AudioSessionPort
    /// `AVAudioSession.Orientation`, `.Location`, `.PolarPattern`: what a data source says of itself.
    public typealias Orientation = DataSourceOrientation
    /// `AVAudioSession.Location`.
    public typealias Location = DataSourceLocation
    /// `AVAudioSession.PolarPattern`.
    public typealias PolarPattern = JackAudioSession.PolarPattern
}
