; Cowork's Windows installer (Inno Setup 6): a per-user install that needs no administrator rights.
;
; Compiled by installer/windows/build-installer, which passes the defines below:
;   iscc /DAppVersion=0.1.0 /DAppNumericVersion=0.1.0 /DAppSourceDir=C:\...\dist\Cowork
;        /DAppOutputDir=C:\...\dist [/DSignUninstaller /Scowork=...] installer\windows\cowork.iss
; and produces AppOutputDir\Cowork-VERSION-windows-x64-setup.exe.
;
; The uninstaller removes the program, then asks whether to delete the user's Cowork data as well
; (never in a silent uninstall). That data is everything platformdirs gives Cowork on Windows with
; appauthor=False and roaming=False: user_data_dir, user_config_dir and user_state_dir are
; %LOCALAPPDATA%\Cowork, user_log_dir is %LOCALAPPDATA%\Cowork\Logs and user_cache_dir
; %LOCALAPPDATA%\Cowork\Cache: one folder. Secrets live in Windows Credential Manager, not there.

#ifndef AppVersion
  #error AppVersion is not defined: compile with installer/windows/build-installer
#endif
#ifndef AppNumericVersion
  #define AppNumericVersion AppVersion
#endif
#ifndef AppSourceDir
  #error AppSourceDir (the built Cowork folder) is not defined: compile with installer/windows/build-installer
#endif
#ifndef AppOutputDir
  #error AppOutputDir is not defined: compile with installer/windows/build-installer
#endif

[Setup]
; Fixed for ever: Windows knows an installed Cowork, its upgrades and its uninstaller by this id.
AppId={{372D4838-F250-48E2-9A0A-2112568A1FAB}
AppName=Cowork
AppVersion={#AppVersion}
AppVerName=Cowork {#AppVersion}
AppPublisher=Cowork
VersionInfoVersion={#AppNumericVersion}
VersionInfoProductName=Cowork
VersionInfoProductTextVersion={#AppVersion}
VersionInfoDescription=Cowork Setup
; Per user, no UAC prompt: the program goes where Windows keeps per-user programs.
PrivilegesRequired=lowest
DefaultDirName={localappdata}\Programs\Cowork
DisableProgramGroupPage=yes
; The app is built for x64; x64compatible also admits Arm64 Windows 11, which runs x64 programs.
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#AppOutputDir}
OutputBaseFilename=Cowork-{#AppVersion}-windows-x64-setup
SetupIconFile=..\icons\cowork.ico
UninstallDisplayIcon={app}\Cowork.exe
UninstallDisplayName=Cowork
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; A running Cowork (the window, cowork-cli, an agent-runtime from {app}) holds files an upgrade must
; replace: Setup finds it with the Restart Manager and offers to close it first.
CloseApplications=yes
CloseApplicationsFilter=*.exe,*.dll,*.pyd
RestartApplications=no
#ifdef SignUninstaller
; The uninstaller is written during compilation; the "cowork" sign tool (installer/windows/sign, given
; by build-installer when a certificate is configured) signs it, and Setup, as they are made.
SignTool=cowork
SignedUninstaller=yes
#endif

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[CustomMessages]
english.CoworkRunning=Cowork is running.%n%nClose every Cowork window, then click OK to continue, or click Cancel to keep Cowork installed.
english.RemoveUserData=Cowork has been removed from this computer.%n%nDo you also want to delete your Cowork data (settings, conversations, logs and downloaded agent runtimes) in:%n%1%n%nChoose No to keep it for a later installation.
english.RemoveUserDataFailed=Some of your Cowork data could not be deleted. What is left is in:%n%1

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade replaces the program whole: libraries and runtime files an older version had, and this
; one does not, must not linger (the bundled runtime is checked against its file list).
Type: filesandordirs; Name: "{app}\_internal"
Type: filesandordirs; Name: "{app}\runtime"

[Files]
Source: "{#AppSourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Cowork"; Filename: "{app}\Cowork.exe"
Name: "{autodesktop}\Cowork"; Filename: "{app}\Cowork.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\Cowork.exe"; Description: "{cm:LaunchProgram,Cowork}"; Flags: nowait postinstall skipifsilent

[Code]
{ platformdirs' user_data_dir("Cowork", appauthor=False) on Windows (roaming=False): the one folder
  holding Cowork's data, configuration, logs, caches and downloaded runtimes. }
function CoworkDataDir(): String;
begin
  Result := ExpandConstant('{localappdata}\Cowork');
end;

{ True while a program from the installation folder runs: the window, cowork-cli or the bundled
  agent-runtime. Windows lists processes through WMI; a failure there is logged and taken as "none",
  so a broken WMI cannot block an uninstall. The uninstaller itself is not Cowork: unins000.exe in the
  installation folder copies itself to a temporary folder, starts the copy (which runs this code) and
  keeps running until the uninstall ends, so it is left out. }
function CoworkIsRunning(): Boolean;
var
  Locator, Service, Processes, Process: Variant;
  AppPrefix, Uninstaller, ExePath: String;
  I: Integer;
begin
  Result := False;
  AppPrefix := Uppercase(AddBackslash(ExpandConstant('{app}')));
  Uninstaller := Uppercase(ExpandConstant('{uninstallexe}'));
  try
    Locator := CreateOleObject('WbemScripting.SWbemLocator');
    Service := Locator.ConnectServer('.', 'root\CIMV2');
    Processes := Service.ExecQuery('SELECT ExecutablePath FROM Win32_Process WHERE ExecutablePath IS NOT NULL');
    for I := 0 to Processes.Count - 1 do
    begin
      Process := Processes.ItemIndex(I);
      ExePath := Uppercase(Process.ExecutablePath);
      if (Copy(ExePath, 1, Length(AppPrefix)) = AppPrefix) and (ExePath <> Uninstaller) then
      begin
        Log('Cowork is running: ' + ExePath);
        Result := True;
        Exit;
      end;
    end;
  except
    Log('Could not list the running programs: ' + GetExceptionMessage);
  end;
end;

{ Files in use cannot be removed: ask the user to close Cowork before anything is uninstalled. A
  silent uninstall has nobody to ask and stops instead, leaving Cowork installed as it was. }
function InitializeUninstall(): Boolean;
begin
  Result := True;
  while CoworkIsRunning() do
  begin
    if UninstallSilent() then
    begin
      Log('Cowork is running; the silent uninstall stops without changing anything.');
      Result := False;
      Exit;
    end;
    if MsgBox(CustomMessage('CoworkRunning'), mbError, MB_OKCANCEL) <> IDOK then
    begin
      Result := False;
      Exit;
    end;
  end;
end;

{ After the program is gone, offer to delete the user's data too. "No" is the default button, and a
  silent uninstall (a script, an administrator's tool) never deletes what the user made. }
procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  DataDir: String;
begin
  if CurUninstallStep <> usPostUninstall then
    Exit;
  DataDir := CoworkDataDir();
  if UninstallSilent() or not DirExists(DataDir) then
    Exit;
  if MsgBox(FmtMessage(CustomMessage('RemoveUserData'), [DataDir]), mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES then
  begin
    if not DelTree(DataDir, True, True, True) then
      MsgBox(FmtMessage(CustomMessage('RemoveUserDataFailed'), [DataDir]), mbError, MB_OK);
  end;
end;
