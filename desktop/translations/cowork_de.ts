<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de" sourcelanguage="en">
<context>
    <name>About</name>
    <message>
        <source>&lt;h3&gt;Cowork {app}&lt;/h3&gt;&lt;p&gt;A local-first desktop agent: it reads, writes and runs things in your projects, asking you before risky actions.&lt;/p&gt;&lt;p&gt;Agent runtime: {runtime}&lt;br&gt;Qt {qt} · Python {python}&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Cowork {app}&lt;/h3&gt;&lt;p&gt;Ein lokaler Desktop-Agent: Er liest, schreibt und führt Dinge in Ihren Projekten aus und fragt Sie vor riskanten Aktionen.&lt;/p&gt;&lt;p&gt;Agent-Laufzeit: {runtime}&lt;br&gt;Qt {qt} · Python {python}&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>Approval</name>
    <message>
        <source>No other approvals waiting</source>
        <translation>Keine weiteren Genehmigungen ausstehend</translation>
    </message>
    <message>
        <source>Approval needed — Cowork</source>
        <translation>Genehmigung erforderlich — Cowork</translation>
    </message>
    <message>
        <source>Changes it would make:</source>
        <translation>Diese Änderungen würden vorgenommen:</translation>
    </message>
    <message>
        <source>Changes it would make</source>
        <translation>Diese Änderungen würden vorgenommen</translation>
    </message>
    <message>
        <source>Only this exact action is approved again without asking: a different command, file or domain still asks. Ends with this conversation.</source>
        <translation>Nur genau diese Aktion wird ohne Rückfrage erneut genehmigt: Für einen anderen Befehl, eine andere Datei oder Domain wird weiterhin gefragt. Gilt bis zum Ende dieser Unterhaltung.</translation>
    </message>
    <message>
        <source>Reason (optional): tell the agent why, or what to do instead</source>
        <translation>Begründung (optional): Sagen Sie dem Agenten, warum – oder was er stattdessen tun soll</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Begründung</translation>
    </message>
    <message>
        <source>&amp;Deny</source>
        <translation>&amp;Ablehnen</translation>
    </message>
    <message>
        <source>Deny (Enter, Esc)</source>
        <translation>Ablehnen (Eingabe, Esc)</translation>
    </message>
    <message>
        <source>&amp;Approve</source>
        <translation>&amp;Genehmigen</translation>
    </message>
    <message>
        <source>Approve ({keys})</source>
        <translation>Genehmigen ({keys})</translation>
    </message>
    <message>
        <source>Always allow in this &amp;project</source>
        <translation>In diesem &amp;Projekt immer erlauben</translation>
    </message>
    <message>
        <source>Conversation: {name}</source>
        <translation>Unterhaltung: {name}</translation>
    </message>
    <message>
        <source>Saves {rules} for this project: later tasks are not asked for what it covers (never for what the policy itself asks about). Listed and removable in Settings.</source>
        <translation>Speichert {rules} für dieses Projekt: Spätere Aufgaben fragen nicht mehr nach dem, was die Regel abdeckt (außer bei dem, wonach die Richtlinie selbst fragt). In den Einstellungen aufgeführt und entfernbar.</translation>
    </message>
    <message>
        <source>Approval needed: {title} — Cowork</source>
        <translation>Genehmigung erforderlich: {title} — Cowork</translation>
    </message>
    <message>
        <source>The rule was not saved: {problem}</source>
        <translation>Die Regel wurde nicht gespeichert: {problem}</translation>
    </message>
    <message>
        <source>Low risk</source>
        <translation>Geringes Risiko</translation>
    </message>
    <message>
        <source>Medium risk</source>
        <translation>Mittleres Risiko</translation>
    </message>
    <message>
        <source>High risk</source>
        <translation>Hohes Risiko</translation>
    </message>
    <message>
        <source>Some text contains invisible or direction-changing characters; they are shown as ⟨U+XXXX⟩ so that what you read is what would run.</source>
        <translation>Ein Text enthält unsichtbare oder richtungsändernde Zeichen; sie werden als ⟨U+XXXX⟩ angezeigt, damit Sie genau das lesen, was ausgeführt würde.</translation>
    </message>
    <message>
        <source>Approval needed</source>
        <translation>Genehmigung erforderlich</translation>
    </message>
    <message>
        <source>Server: {server} · Tool: {tool}</source>
        <translation>Server: {server} · Werkzeug: {tool}</translation>
    </message>
    <message>
        <source>MCP tool</source>
        <translation>MCP-Werkzeug</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>Argumente</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>Werkzeug</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>Befehl</translation>
    </message>
    <message>
        <source>In folder</source>
        <translation>Im Ordner</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>Request</source>
        <translation>Anfrage</translation>
    </message>
    <message>
        <source>Approve this exact command for the rest of this conversation</source>
        <translation>Genau diesen Befehl für den Rest dieser Unterhaltung genehmigen</translation>
    </message>
    <message>
        <source>Approve requests to {host} for the rest of this conversation</source>
        <translation>Anfragen an {host} für den Rest dieser Unterhaltung genehmigen</translation>
    </message>
    <message>
        <source>Approve this action on this file for the rest of this conversation</source>
        <translation>Diese Aktion an dieser Datei für den Rest dieser Unterhaltung genehmigen</translation>
    </message>
    <message>
        <source>{time} left</source>
        <translation>noch {time}</translation>
    </message>
    <message>
        <source>{count} more waiting</source>
        <translation>{count} weitere ausstehend</translation>
    </message>
    <message>
        <source>No other requests waiting</source>
        <translation>Keine weiteren Anfragen ausstehend</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Verbleibende Zeit</translation>
    </message>
</context>
<context>
    <name>Attachments</name>
    <message>
        <source>Pasted image</source>
        <translation>Eingefügtes Bild</translation>
    </message>
    <message>
        <source>Your message is {count:,} characters; the limit is {limit:,}.</source>
        <translation>Ihre Nachricht hat {count:,} Zeichen; erlaubt sind {limit:,}.</translation>
    </message>
    <message>
        <source>{name} is a folder; attach files one by one.</source>
        <translation>{name} ist ein Ordner; hängen Sie Dateien einzeln an.</translation>
    </message>
    <message>
        <source>{name} cannot be read: {reason}</source>
        <translation>{name} kann nicht gelesen werden: {reason}</translation>
    </message>
    <message>
        <source>A message can carry at most {count} images.</source>
        <translation>Eine Nachricht kann höchstens {count} Bilder enthalten.</translation>
    </message>
    <message>
        <source>The pasted image</source>
        <translation>Das eingefügte Bild</translation>
    </message>
    <message>
        <source>{name} is {size:.1f} MB; images are limited to {limit:.2f} MB.</source>
        <translation>{name} ist {size:.1f} MB groß; Bilder dürfen höchstens {limit:.2f} MB groß sein.</translation>
    </message>
    <message>
        <source>{name} is not a PNG, JPEG, GIF or WebP image.</source>
        <translation>{name} ist kein PNG-, JPEG-, GIF- oder WebP-Bild.</translation>
    </message>
    <message>
        <source>The model chosen in Settings does not accept images. Remove the images, or choose a model that reads them.</source>
        <translation>Das in den Einstellungen gewählte Modell akzeptiert keine Bilder. Entfernen Sie die Bilder oder wählen Sie ein Modell, das Bilder liest.</translation>
    </message>
</context>
<context>
    <name>Banners</name>
    <message>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Continue in a new session</source>
        <translation>In neuer Sitzung fortfahren</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Open Settings</source>
        <translation>Einstellungen öffnen</translation>
    </message>
    <message>
        <source>Open logs folder</source>
        <translation>Protokollordner öffnen</translation>
    </message>
    <message>
        <source>Download a compatible runtime</source>
        <translation>Kompatible Laufzeit herunterladen</translation>
    </message>
    <message>
        <source>This conversation has used up its token budget. Continue in a new session: it keeps the conversation&apos;s history and starts with a fresh budget.</source>
        <translation>Diese Unterhaltung hat ihr Token-Budget aufgebraucht. Fahren Sie in einer neuen Sitzung fort: Sie übernimmt den Verlauf der Unterhaltung und beginnt mit einem neuen Budget.</translation>
    </message>
    <message>
        <source>The LLM gateway&apos;s guardrail blocked the request: {reason}. Rephrase the request and send it again.</source>
        <translation>Die Schutzregel des LLM-Gateways hat die Anfrage blockiert: {reason}. Formulieren Sie die Anfrage um und senden Sie sie erneut.</translation>
    </message>
    <message>
        <source>The task stopped after {count} steps, its step limit. Send “continue” to let it go on, or raise the step limit in Settings.</source>
        <translation>Die Aufgabe wurde nach {count} Schritten angehalten, ihrem Schrittlimit. Senden Sie „weiter“, damit sie fortfährt, oder erhöhen Sie das Schrittlimit in den Einstellungen.</translation>
    </message>
    <message>
        <source>The task stopped at its step limit. Send “continue” to let it go on, or raise the step limit in Settings.</source>
        <translation>Die Aufgabe wurde an ihrem Schrittlimit angehalten. Senden Sie „weiter“, damit sie fortfährt, oder erhöhen Sie das Schrittlimit in den Einstellungen.</translation>
    </message>
    <message>
        <source>The task stopped because the agent kept repeating the same action ({action}). Rephrase the request or add detail, then send it again.</source>
        <translation>Die Aufgabe wurde angehalten, weil der Agent immer wieder dieselbe Aktion wiederholt hat ({action}). Formulieren Sie die Anfrage um oder ergänzen Sie Details und senden Sie sie dann erneut.</translation>
    </message>
    <message>
        <source>the same tool call</source>
        <translation>derselbe Werkzeugaufruf</translation>
    </message>
    <message>
        <source>The latest message and its tool results are too large for the model&apos;s input window. Ask for a smaller piece of work, or continue in a new session.</source>
        <translation>Die letzte Nachricht und ihre Werkzeugergebnisse sind zu groß für das Eingabefenster des Modells. Bitten Sie um ein kleineres Arbeitspaket oder fahren Sie in einer neuen Sitzung fort.</translation>
    </message>
    <message>
        <source>The policy does not allow this model call: {reason}. Choose an allowed model in Settings.</source>
        <translation>Die Richtlinie erlaubt diesen Modellaufruf nicht: {reason}. Wählen Sie in den Einstellungen ein erlaubtes Modell.</translation>
    </message>
    <message>
        <source>The model call failed: {problem}. Check the LLM gateway in Settings, then send the request again.</source>
        <translation>Der Modellaufruf ist fehlgeschlagen: {problem}. Prüfen Sie das LLM-Gateway in den Einstellungen und senden Sie die Anfrage dann erneut.</translation>
    </message>
    <message>
        <source>The agent runtime hit an internal error and stopped the task. Send the request again; if it keeps happening, the logs say why.</source>
        <translation>Die Agent-Laufzeit ist auf einen internen Fehler gestoßen und hat die Aufgabe beendet. Senden Sie die Anfrage erneut; falls es wieder passiert, steht der Grund in den Protokollen.</translation>
    </message>
    <message>
        <source>The task failed at step {step}: {reason}.</source>
        <translation>Die Aufgabe ist bei Schritt {step} fehlgeschlagen: {reason}.</translation>
    </message>
    <message>
        <source>The task failed: {reason}.</source>
        <translation>Die Aufgabe ist fehlgeschlagen: {reason}.</translation>
    </message>
    <message>
        <source>Paused after {count} attempts: {problem}. Fix the gateway or its settings, then resume — the task goes on from its last step.</source>
        <translation>Nach {count} Versuchen pausiert: {problem}. Beheben Sie das Problem mit dem Gateway oder seinen Einstellungen und setzen Sie dann fort — die Aufgabe macht bei ihrem letzten Schritt weiter.</translation>
    </message>
    <message>
        <source>Paused: {problem}. Fix the gateway or its settings, then resume — the task goes on from its last step.</source>
        <translation>Pausiert: {problem}. Beheben Sie das Problem mit dem Gateway oder seinen Einstellungen und setzen Sie dann fort — die Aufgabe macht bei ihrem letzten Schritt weiter.</translation>
    </message>
    <message>
        <source>Paused: the organisation revoked this session&apos;s policy ({reason}). Resume once an administrator has installed a valid policy, or close the conversation.</source>
        <translation>Pausiert: Die Organisation hat die Richtlinie dieser Sitzung widerrufen ({reason}). Setzen Sie fort, sobald ein Administrator eine gültige Richtlinie eingerichtet hat, oder schließen Sie die Unterhaltung.</translation>
    </message>
    <message>
        <source>no reason</source>
        <translation>ohne Begründung</translation>
    </message>
    <message>
        <source>Paused: the session&apos;s policy expired. Resume to fetch a renewed policy and go on.</source>
        <translation>Pausiert: Die Richtlinie der Sitzung ist abgelaufen. Setzen Sie fort, um eine erneuerte Richtlinie abzurufen und weiterzumachen.</translation>
    </message>
    <message>
        <source>Paused: {reason}. Resume when the problem is fixed.</source>
        <translation>Pausiert: {reason}. Setzen Sie fort, sobald das Problem behoben ist.</translation>
    </message>
    <message>
        <source>A valid policy is in force again. Resume to go on from where the task paused.</source>
        <translation>Es gilt wieder eine gültige Richtlinie. Setzen Sie fort, um dort weiterzumachen, wo die Aufgabe pausiert hat.</translation>
    </message>
    <message>
        <source>Stopped by an administrator: {reason}. The session has ended; continue in a new session — its history comes along.</source>
        <translation>Von einem Administrator beendet: {reason}. Die Sitzung ist beendet; fahren Sie in einer neuen Sitzung fort — der Verlauf wird übernommen.</translation>
    </message>
    <message>
        <source>Stopped by an administrator. The session has ended; continue in a new session — its history comes along.</source>
        <translation>Von einem Administrator beendet. Die Sitzung ist beendet; fahren Sie in einer neuen Sitzung fort — der Verlauf wird übernommen.</translation>
    </message>
    <message>
        <source>reading files</source>
        <translation>Dateien lesen</translation>
    </message>
    <message>
        <source>writing files</source>
        <translation>Dateien schreiben</translation>
    </message>
    <message>
        <source>deleting files</source>
        <translation>Dateien löschen</translation>
    </message>
    <message>
        <source>running commands</source>
        <translation>Befehle ausführen</translation>
    </message>
    <message>
        <source>web requests</source>
        <translation>Webanfragen</translation>
    </message>
    <message>
        <source>saving artifacts</source>
        <translation>Artefakte speichern</translation>
    </message>
    <message>
        <source>remote tools</source>
        <translation>entfernte Werkzeuge</translation>
    </message>
    <message>
        <source>MCP tools</source>
        <translation>MCP-Werkzeuge</translation>
    </message>
    <message>
        <source>model calls</source>
        <translation>Modellaufrufe</translation>
    </message>
    <message>
        <source>now allowed: {capabilities}</source>
        <translation>jetzt erlaubt: {capabilities}</translation>
    </message>
    <message>
        <source>no longer allowed: {capabilities}</source>
        <translation>nicht mehr erlaubt: {capabilities}</translation>
    </message>
    <message>
        <source>The organisation&apos;s policy was updated; what this session may do is unchanged.</source>
        <translation>Die Richtlinie der Organisation wurde aktualisiert; was diese Sitzung darf, bleibt unverändert.</translation>
    </message>
    <message>
        <source>The organisation&apos;s policy was updated — {changes}.</source>
        <translation>Die Richtlinie der Organisation wurde aktualisiert — {changes}.</translation>
    </message>
    <message>
        <source>the LLM gateway at {endpoint}</source>
        <translation>das LLM-Gateway unter {endpoint}</translation>
    </message>
    <message>
        <source>the LLM gateway</source>
        <translation>das LLM-Gateway</translation>
    </message>
    <message>
        <source>{gateway} refused the credentials with HTTP {status}</source>
        <translation>{gateway} hat die Zugangsdaten mit HTTP {status} abgelehnt</translation>
    </message>
    <message>
        <source>{gateway} answered HTTP {status}</source>
        <translation>{gateway} hat mit HTTP {status} geantwortet</translation>
    </message>
    <message>
        <source>{gateway} could not be reached: {error}</source>
        <translation>{gateway} war nicht erreichbar: {error}</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>keine Antwort</translation>
    </message>
    <message>
        <source>{gateway} failed: {reason}</source>
        <translation>{gateway} ist fehlgeschlagen: {reason}</translation>
    </message>
    <message>
        <source>no reason given</source>
        <translation>kein Grund angegeben</translation>
    </message>
    <message>
        <source>The agent runtime stopped unexpectedly ({reason}). Resuming from the last checkpoint…</source>
        <translation>Die Agent-Laufzeit wurde unerwartet beendet ({reason}). Es wird ab dem letzten Prüfpunkt fortgesetzt…</translation>
    </message>
    <message>
        <source>The agent runtime stopped and could not be resumed: {reason}. Try again, or open the logs folder to see why.</source>
        <translation>Die Agent-Laufzeit wurde beendet und konnte nicht fortgesetzt werden: {reason}. Versuchen Sie es erneut oder öffnen Sie den Protokollordner, um den Grund zu sehen.</translation>
    </message>
</context>
<context>
    <name>Checklist</name>
    <message>
        <source>Nothing has verified the work yet.</source>
        <translation>Die Arbeit wurde noch nicht überprüft.</translation>
    </message>
    <message>
        <source>Checklist — {done} of {total} done</source>
        <translation>Checkliste — {done} von {total} erledigt</translation>
    </message>
    <message>
        <source>  (verification)</source>
        <translation>  (Überprüfung)</translation>
    </message>
</context>
<context>
    <name>CompatibleRuntime</name>
    <message>
        <source>Reading the release manifest…</source>
        <translation>Release-Manifest wird gelesen…</translation>
    </message>
    <message>
        <source>Downloading runtime {version}…</source>
        <translation>Laufzeit {version} wird heruntergeladen…</translation>
    </message>
    <message>
        <source>Unpacking and checking runtime {version}…</source>
        <translation>Laufzeit {version} wird entpackt und geprüft…</translation>
    </message>
    <message>
        <source>Starting runtime {version} to check it…</source>
        <translation>Laufzeit {version} wird zur Prüfung gestartet…</translation>
    </message>
    <message>
        <source>Making runtime {version} the one new sessions use…</source>
        <translation>Laufzeit {version} wird für neue Sitzungen aktiviert…</translation>
    </message>
    <message>
        <source>Compatible agent runtime</source>
        <translation>Kompatible Agent-Laufzeit</translation>
    </message>
    <message>
        <source>Download and install</source>
        <translation>Herunterladen und installieren</translation>
    </message>
    <message>
        <source>A runtime update is running; try again when it has finished.</source>
        <translation>Eine Laufzeit-Aktualisierung läuft bereits; versuchen Sie es erneut, wenn sie abgeschlossen ist.</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>Ausblenden</translation>
    </message>
    <message>
        <source>Runtime {version} is installed; starting the session again.</source>
        <translation>Laufzeit {version} ist installiert; die Sitzung wird neu gestartet.</translation>
    </message>
    <message>
        <source>No compatible runtime was installed: {message}.</source>
        <translation>Es wurde keine kompatible Laufzeit installiert: {message}.</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Ask Cowork to do something… ({keys} to send)</source>
        <translation>Bitten Sie Cowork um etwas… ({keys} zum Senden)</translation>
    </message>
    <message>
        <source>Ask Cowork to do something… (Enter to send, Shift+Enter for a new line)</source>
        <translation>Bitten Sie Cowork um etwas… (Eingabe zum Senden, Umschalt+Eingabe für eine neue Zeile)</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <source>Stop the running task (Esc)</source>
        <translation>Die laufende Aufgabe anhalten (Esc)</translation>
    </message>
    <message>
        <source>&amp;Attach…</source>
        <translation>&amp;Anhängen…</translation>
    </message>
    <message>
        <source>Attach files or images</source>
        <translation>Dateien oder Bilder anhängen</translation>
    </message>
    <message>
        <source>Attach files (sent by path) or images (sent to the model); or drop or paste them</source>
        <translation>Dateien (per Pfad gesendet) oder Bilder (an das Modell gesendet) anhängen – oder hierher ziehen bzw. einfügen</translation>
    </message>
    <message>
        <source>Enter</source>
        <translation>Eingabe</translation>
    </message>
    <message>
        <source>Send the message ({keys})</source>
        <translation>Nachricht senden ({keys})</translation>
    </message>
    <message>
        <source>Remove this attachment</source>
        <translation>Diesen Anhang entfernen</translation>
    </message>
    <message>
        <source>Remove {name}</source>
        <translation>{name} entfernen</translation>
    </message>
    <message>
        <source>This conversation has no project folder: the agent may not be allowed to read {names} (your policy decides).</source>
        <translation>Diese Unterhaltung hat keinen Projektordner: Der Agent darf {names} möglicherweise nicht lesen (Ihre Richtlinie entscheidet).</translation>
    </message>
    <message>
        <source>Outside the project folder: the agent may not be allowed to read {names} (your policy decides).</source>
        <translation>Außerhalb des Projektordners: Der Agent darf {names} möglicherweise nicht lesen (Ihre Richtlinie entscheidet).</translation>
    </message>
    <message>
        <source>A command name must follow the /.</source>
        <translation>Auf / muss ein Befehlsname folgen.</translation>
    </message>
    <message>
        <source>/{name} is not a command name (letters, digits, _ and - only).</source>
        <translation>/{name} ist kein Befehlsname (nur Buchstaben, Ziffern, _ und -).</translation>
    </message>
    <message>
        <source>There is no command /{name}.</source>
        <translation>Es gibt keinen Befehl /{name}.</translation>
    </message>
    <message>
        <source> Known commands: {commands}.</source>
        <translation> Bekannte Befehle: {commands}.</translation>
    </message>
    <message>
        <source> No commands are defined. Add NAME.md files to .cowork/commands/ in the project or to {folder}.</source>
        <translation> Es sind keine Befehle definiert. Legen Sie NAME.md-Dateien in .cowork/commands/ im Projekt oder in {folder} an.</translation>
    </message>
    <message>
        <source> To send a message starting with /, begin it with //.</source>
        <translation> Um eine Nachricht zu senden, die mit / beginnt, beginnen Sie sie mit //.</translation>
    </message>
</context>
<context>
    <name>Conversation</name>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Copy this code</source>
        <translation>Diesen Code kopieren</translation>
    </message>
    <message>
        <source>Copy code block</source>
        <translation>Codeblock kopieren</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>Unterhaltung</translation>
    </message>
    <message>
        <source>Show earlier messages</source>
        <translation>Frühere Nachrichten anzeigen</translation>
    </message>
    <message>
        <source>Ask for something to get started. Ctrl+Enter sends.</source>
        <translation>Bitten Sie um etwas, um zu beginnen. Strg+Eingabe sendet.</translation>
    </message>
    <message>
        <source>Show earlier messages ({count} more)</source>
        <translation>Frühere Nachrichten anzeigen ({count} weitere)</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <source>waiting for your approval</source>
        <translation>wartet auf Ihre Genehmigung</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Sie</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>Ihre Nachricht</translation>
    </message>
    <message>
        <source>Answer text</source>
        <translation>Antworttext</translation>
    </message>
    <message>
        <source>Cowork&apos;s answer</source>
        <translation>Antwort von Cowork</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>Abgebrochen</translation>
    </message>
    <message>
        <source>The task was cancelled while this answer was being written.</source>
        <translation>Die Aufgabe wurde abgebrochen, während diese Antwort geschrieben wurde.</translation>
    </message>
    <message>
        <source>Copy this answer as Markdown</source>
        <translation>Diese Antwort als Markdown kopieren</translation>
    </message>
    <message>
        <source>Copy the answer</source>
        <translation>Antwort kopieren</translation>
    </message>
    <message>
        <source>Answer cancelled: {text}</source>
        <translation>Antwort abgebrochen: {text}</translation>
    </message>
    <message>
        <source>Cowork answered: {text}</source>
        <translation>Cowork hat geantwortet: {text}</translation>
    </message>
    <message>
        <source>Tool output</source>
        <translation>Werkzeugausgabe</translation>
    </message>
    <message>
        <source>(running…)</source>
        <translation>(läuft…)</translation>
    </message>
    <message>
        <source>waited {time} for approval</source>
        <translation>hat {time} auf Genehmigung gewartet</translation>
    </message>
    <message>
        <source>You denied this</source>
        <translation>Von Ihnen abgelehnt</translation>
    </message>
    <message>
        <source>Not approved in time</source>
        <translation>Nicht rechtzeitig genehmigt</translation>
    </message>
    <message>
        <source>Not run: the task was cancelled</source>
        <translation>Nicht ausgeführt: Die Aufgabe wurde abgebrochen</translation>
    </message>
    <message>
        <source>Blocked by policy: {reason}</source>
        <translation>Von der Richtlinie blockiert: {reason}</translation>
    </message>
    <message>
        <source>Blocked by policy</source>
        <translation>Von der Richtlinie blockiert</translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation>{ms} ms</translation>
    </message>
    <message>
        <source>{s} s</source>
        <translation>{s} s</translation>
    </message>
    <message>
        <source>{m} min {s} s</source>
        <translation>{m} min {s} s</translation>
    </message>
    <message>
        <source>(no output)</source>
        <translation>(keine Ausgabe)</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>Bild</translation>
    </message>
    <message>
        <source>🖼 {name} (not available)</source>
        <translation>🖼 {name} (nicht verfügbar)</translation>
    </message>
    <message>
        <source>Attached image {name}</source>
        <translation>Angehängtes Bild {name}</translation>
    </message>
    <message>
        <source>the gateway</source>
        <translation>das Gateway</translation>
    </message>
    <message>
        <source>The conversation now uses the current gateway settings ({endpoint}).</source>
        <translation>Die Unterhaltung verwendet jetzt die aktuellen Gateway-Einstellungen ({endpoint}).</translation>
    </message>
    <message>
        <source>Reverted the agent&apos;s changes: {files}.</source>
        <translation>Änderungen des Agenten zurückgesetzt: {files}.</translation>
    </message>
    <message>
        <source>This conversation has no session to continue from yet.</source>
        <translation>Diese Unterhaltung hat noch keine Sitzung, an die angeknüpft werden kann.</translation>
    </message>
    <message>
        <source>The conversation&apos;s history is not in the backend, so it cannot continue in a new session.</source>
        <translation>Der Verlauf der Unterhaltung ist nicht im Backend, daher kann sie nicht in einer neuen Sitzung fortgesetzt werden.</translation>
    </message>
    <message>
        <source>Continued in a new session with this conversation&apos;s history.</source>
        <translation>In einer neuen Sitzung mit dem Verlauf dieser Unterhaltung fortgesetzt.</translation>
    </message>
    <message>
        <source>the agent runtime is being restarted</source>
        <translation>die Agent-Laufzeit wird neu gestartet</translation>
    </message>
    <message>
        <source>no agent runtime</source>
        <translation>keine Agent-Laufzeit</translation>
    </message>
    <message>
        <source>The agent runtime stopped before the conversation started ({reason}). Send again to retry.</source>
        <translation>Die Agent-Laufzeit wurde beendet, bevor die Unterhaltung begann ({reason}). Senden Sie erneut, um es noch einmal zu versuchen.</translation>
    </message>
    <message>
        <source>it stopped {count} times in a row ({reason})</source>
        <translation>sie wurde {count}-mal hintereinander beendet ({reason})</translation>
    </message>
    <message>
        <source>{message}. Continue in a new session: its history comes along.</source>
        <translation>{message}. Fahren Sie in einer neuen Sitzung fort: Der Verlauf wird übernommen.</translation>
    </message>
    <message>
        <source>The agent runtime was restarted; the conversation resumed at step {step}.</source>
        <translation>Die Agent-Laufzeit wurde neu gestartet; die Unterhaltung wurde bei Schritt {step} fortgesetzt.</translation>
    </message>
    <message>
        <source>The agent runtime was restarted; the conversation resumed.</source>
        <translation>Die Agent-Laufzeit wurde neu gestartet; die Unterhaltung wurde fortgesetzt.</translation>
    </message>
    <message>
        <source>Task cancelled.</source>
        <translation>Aufgabe abgebrochen.</translation>
    </message>
    <message>
        <source>1 file changed — review the changes.</source>
        <translation>1 Datei geändert — prüfen Sie die Änderungen.</translation>
    </message>
    <message>
        <source>{count} files changed — review the changes.</source>
        <translation>{count} Dateien geändert — prüfen Sie die Änderungen.</translation>
    </message>
    <message>
        <source>An approval request timed out and was denied.</source>
        <translation>Eine Genehmigungsanfrage ist abgelaufen und wurde abgelehnt.</translation>
    </message>
    <message>
        <source> (cut to fit)</source>
        <translation> (gekürzt)</translation>
    </message>
    <message>
        <source>Project instructions loaded: {files}</source>
        <translation>Projektanweisungen geladen: {files}</translation>
    </message>
    <message>
        <source>The session ended with an error: {reason}. Continue in a new session: its history comes along.</source>
        <translation>Die Sitzung wurde mit einem Fehler beendet: {reason}. Fahren Sie in einer neuen Sitzung fort: Der Verlauf wird übernommen.</translation>
    </message>
    <message>
        <source>The session&apos;s policy expired.</source>
        <translation>Die Richtlinie der Sitzung ist abgelaufen.</translation>
    </message>
    <message>
        <source>The organisation revoked the policy of this session ({reason}). It pauses once what is running now has finished.</source>
        <translation>Die Organisation hat die Richtlinie dieser Sitzung widerrufen ({reason}). Sie pausiert, sobald das gerade Laufende abgeschlossen ist.</translation>
    </message>
    <message>
        <source>The saved state of this conversation could not be read, so it starts fresh; its history up to the last completed task is kept.</source>
        <translation>Der gespeicherte Zustand dieser Unterhaltung konnte nicht gelesen werden, daher beginnt sie neu; ihr Verlauf bis zur letzten abgeschlossenen Aufgabe bleibt erhalten.</translation>
    </message>
    <message>
        <source>Could not save {artifact} to the backend: {reason}. The conversation goes on.</source>
        <translation>{artifact} konnte nicht im Backend gespeichert werden: {reason}. Die Unterhaltung geht weiter.</translation>
    </message>
    <message>
        <source>an artifact</source>
        <translation>Ein Artefakt</translation>
    </message>
    <message>
        <source>{artifact} was not saved to the backend: the policy does not allow it ({reason}). The conversation goes on.</source>
        <translation>{artifact} wurde nicht im Backend gespeichert: Die Richtlinie erlaubt es nicht ({reason}). Die Unterhaltung geht weiter.</translation>
    </message>
    <message>
        <source>An artifact</source>
        <translation>Ein Artefakt</translation>
    </message>
    <message>
        <source>1 sensitive value was redacted from what was sent to the model.</source>
        <translation>1 vertraulicher Wert wurde aus den an das Modell gesendeten Daten entfernt.</translation>
    </message>
    <message>
        <source>{count} sensitive values were redacted from what was sent to the model.</source>
        <translation>{count} vertrauliche Werte wurden aus den an das Modell gesendeten Daten entfernt.</translation>
    </message>
    <message>
        <source>1 earlier message</source>
        <translation>1 frühere Nachricht</translation>
    </message>
    <message>
        <source>{count} earlier messages</source>
        <translation>{count} frühere Nachrichten</translation>
    </message>
    <message>
        <source>The conversation outgrew the model&apos;s context window: {messages} were summarised; the model now sees the summary in their place.</source>
        <translation>Die Unterhaltung ist über das Kontextfenster des Modells hinausgewachsen: {messages} wurden zusammengefasst; das Modell sieht nun die Zusammenfassung an ihrer Stelle.</translation>
    </message>
    <message>
        <source>summarising was not possible</source>
        <translation>eine Zusammenfassung war nicht möglich</translation>
    </message>
    <message>
        <source>The conversation outgrew the model&apos;s context window: {messages} are no longer sent to the model ({reason}).</source>
        <translation>Die Unterhaltung ist über das Kontextfenster des Modells hinausgewachsen: {messages} werden nicht mehr an das Modell gesendet ({reason}).</translation>
    </message>
    <message>
        <source>{server} asks for your input</source>
        <translation>{server} bittet um Ihre Eingabe</translation>
    </message>
    <message>
        <source>the server</source>
        <translation>der Server</translation>
    </message>
    <message>
        <source>This conversation is no longer in the list.</source>
        <translation>Diese Unterhaltung ist nicht mehr in der Liste.</translation>
    </message>
    <message>
        <source>This conversation has not started yet; name it once its first message is sent.</source>
        <translation>Diese Unterhaltung hat noch nicht begonnen; benennen Sie sie, sobald die erste Nachricht gesendet ist.</translation>
    </message>
    <message>
        <source>Conversation names cannot be kept in this setup.</source>
        <translation>In dieser Konfiguration können Namen von Unterhaltungen nicht gespeichert werden.</translation>
    </message>
    <message>
        <source>The name could not be saved: {reason}.</source>
        <translation>Der Name konnte nicht gespeichert werden: {reason}.</translation>
    </message>
    <message>
        <source>A task is still running in this conversation; stop it first.</source>
        <translation>In dieser Unterhaltung läuft noch eine Aufgabe; halten Sie sie zuerst an.</translation>
    </message>
    <message>
        <source>This conversation has no messages to export yet.</source>
        <translation>Diese Unterhaltung hat noch keine Nachrichten zum Exportieren.</translation>
    </message>
    <message>
        <source>Cowork closed while this conversation was running. Resume to go on from its last checkpoint.</source>
        <translation>Cowork wurde geschlossen, während diese Unterhaltung lief. Setzen Sie fort, um ab ihrem letzten Prüfpunkt weiterzumachen.</translation>
    </message>
    <message>
        <source>This conversation still uses the previous gateway settings; the new ones apply from its next task or when it resumes.</source>
        <translation>Diese Unterhaltung verwendet noch die vorherigen Gateway-Einstellungen; die neuen gelten ab ihrer nächsten Aufgabe oder wenn sie fortgesetzt wird.</translation>
    </message>
    <message>
        <source>Interrupted conversation</source>
        <translation>Unterbrochene Unterhaltung</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>Neue Unterhaltung</translation>
    </message>
    <message>
        <source>The backend at {url} cannot be reached ({problem}).</source>
        <translation>Das Backend unter {url} ist nicht erreichbar ({problem}).</translation>
    </message>
    <message>
        <source>The backend refused to delete the conversation: {problem}</source>
        <translation>Das Backend hat das Löschen der Unterhaltung abgelehnt: {problem}</translation>
    </message>
    <message>
        <source>The backend sent an answer this app cannot read ({path}).</source>
        <translation>Das Backend hat eine Antwort gesendet, die diese App nicht lesen kann ({path}).</translation>
    </message>
    <message>
        <source>The backend refused to list the history: {problem}</source>
        <translation>Das Backend hat das Auflisten des Verlaufs abgelehnt: {problem}</translation>
    </message>
    <message>
        <source>A conversation&apos;s name cannot be empty.</source>
        <translation>Der Name einer Unterhaltung darf nicht leer sein.</translation>
    </message>
    <message>
        <source>A conversation&apos;s name can be at most {count} characters.</source>
        <translation>Der Name einer Unterhaltung darf höchstens {count} Zeichen lang sein.</translation>
    </message>
</context>
<context>
    <name>DeleteConversation</name>
    <message>
        <source>Delete Conversation</source>
        <translation>Unterhaltung löschen</translation>
    </message>
    <message>
        <source>Delete “{title}”?</source>
        <translation>„{title}“ löschen?</translation>
    </message>
    <message>
        <source>Its messages and the files Cowork saved for it are removed from the backend for good. Files in your project folder are not touched.</source>
        <translation>Ihre Nachrichten und die Dateien, die Cowork dafür gespeichert hat, werden endgültig aus dem Backend entfernt. Dateien in Ihrem Projektordner bleiben unberührt.</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <source>Delete the conversation</source>
        <translation>Die Unterhaltung löschen</translation>
    </message>
</context>
<context>
    <name>Elicitation</name>
    <message>
        <source>An MCP server asks for information — Cowork</source>
        <translation>Ein MCP-Server bittet um Angaben — Cowork</translation>
    </message>
    <message>
        <source>Who asks</source>
        <translation>Wer fragt</translation>
    </message>
    <message>
        <source>The server&apos;s message</source>
        <translation>Die Nachricht des Servers</translation>
    </message>
    <message>
        <source>Caution</source>
        <translation>Vorsicht</translation>
    </message>
    <message>
        <source>Form</source>
        <translation>Formular</translation>
    </message>
    <message>
        <source>Why the server refused the answer</source>
        <translation>Warum der Server die Antwort abgelehnt hat</translation>
    </message>
    <message>
        <source>What is missing</source>
        <translation>Was fehlt</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Dismiss the request without answering it (Esc)</source>
        <translation>Die Anfrage verwerfen, ohne sie zu beantworten (Esc)</translation>
    </message>
    <message>
        <source>&amp;Decline</source>
        <translation>A&amp;blehnen</translation>
    </message>
    <message>
        <source>&amp;Accept</source>
        <translation>&amp;Annehmen</translation>
    </message>
    <message>
        <source>MCP server “{server}” asks for information</source>
        <translation>MCP-Server „{server}“ bittet um Angaben</translation>
    </message>
    <message>
        <source>While running its tool {tool}.</source>
        <translation>Während sein Werkzeug {tool} läuft.</translation>
    </message>
    <message>
        <source>While one of its tools runs.</source>
        <translation>Während eines seiner Werkzeuge läuft.</translation>
    </message>
    <message>
        <source> Conversation: {name}.</source>
        <translation> Unterhaltung: {name}.</translation>
    </message>
    <message>
        <source>(The server gave no message.)</source>
        <translation>(Der Server hat keine Nachricht angegeben.)</translation>
    </message>
    <message>
        <source>What you enter goes to {server}. Never enter passwords, keys or other secrets in this form.</source>
        <translation>Was Sie eingeben, geht an {server}. Geben Sie in diesem Formular niemals Passwörter, Schlüssel oder andere Geheimnisse ein.</translation>
    </message>
    <message>
        <source>{server} asks for information — Cowork</source>
        <translation>{server} bittet um Angaben — Cowork</translation>
    </message>
    <message>
        <source>{server} did not accept the answer: {refusal}. Correct it and accept again, or decline.</source>
        <translation>{server} hat die Antwort nicht akzeptiert: {refusal}. Korrigieren Sie sie und nehmen Sie erneut an, oder lehnen Sie ab.</translation>
    </message>
    <message>
        <source>Nothing to fill in: Accept answers yes, Decline answers no.</source>
        <translation>Nichts auszufüllen: Annehmen antwortet mit Ja, Ablehnen mit Nein.</translation>
    </message>
    <message>
        <source>Required.</source>
        <translation>Pflichtfeld.</translation>
    </message>
    <message>
        <source>Problem with {field}</source>
        <translation>Problem mit {field}</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>(keine Angabe)</translation>
    </message>
    <message>
        <source>Choose one…</source>
        <translation>Bitte wählen…</translation>
    </message>
    <message>
        <source>Cannot be entered here: {reason}.</source>
        <translation>Kann hier nicht eingegeben werden: {reason}.</translation>
    </message>
    <message>
        <source>To accept: {problem} (and {count} more)</source>
        <translation>Zum Annehmen: {problem} (und {count} weitere)</translation>
    </message>
    <message>
        <source>To accept: {problem}</source>
        <translation>Zum Annehmen: {problem}</translation>
    </message>
    <message>
        <source>Send what you entered to {server}</source>
        <translation>Ihre Eingaben an {server} senden</translation>
    </message>
    <message>
        <source>Fill in the form first</source>
        <translation>Füllen Sie zuerst das Formular aus</translation>
    </message>
    <message>
        <source>Tell {server} you will not provide this</source>
        <translation>{server} mitteilen, dass Sie dies nicht angeben</translation>
    </message>
    <message>
        <source>Not set</source>
        <translation>Nicht gesetzt</translation>
    </message>
</context>
<context>
    <name>Errors</name>
    <message>
        <source>reopen the interrupted conversations</source>
        <translation>Wiederöffnen der unterbrochenen Unterhaltungen</translation>
    </message>
    <message>
        <source>rename the conversation</source>
        <translation>Umbenennen der Unterhaltung</translation>
    </message>
    <message>
        <source>delete the conversation</source>
        <translation>Löschen der Unterhaltung</translation>
    </message>
    <message>
        <source>export the conversation</source>
        <translation>Exportieren der Unterhaltung</translation>
    </message>
    <message>
        <source>open the conversation</source>
        <translation>Öffnen der Unterhaltung</translation>
    </message>
    <message>
        <source>close the conversation</source>
        <translation>Schließen der Unterhaltung</translation>
    </message>
    <message>
        <source>show the changes</source>
        <translation>Anzeigen der Änderungen</translation>
    </message>
    <message>
        <source>revert the changes</source>
        <translation>Zurücksetzen der Änderungen</translation>
    </message>
    <message>
        <source>Could not {what}</source>
        <translation>{what} fehlgeschlagen</translation>
    </message>
    <message>
        <source>{message} Continue the conversation in a new session: its history comes along.</source>
        <translation>{message} Führen Sie die Unterhaltung in einer neuen Sitzung fort: Der Verlauf wird übernommen.</translation>
    </message>
    <message>
        <source>The agent runtime is not connected ({problem}).</source>
        <translation>Die Agent-Laufzeit ist nicht verbunden ({problem}).</translation>
    </message>
    <message>
        <source>No answer came within the time limit; the agent runtime may be stuck.</source>
        <translation>Innerhalb der Frist kam keine Antwort; die Agent-Laufzeit hängt möglicherweise.</translation>
    </message>
    <message>
        <source>Something unexpected went wrong ({problem}). The logs have the details.</source>
        <translation>Etwas Unerwartetes ist schiefgegangen ({problem}). Die Protokolle enthalten die Einzelheiten.</translation>
    </message>
    <message>
        <source>load the conversation list</source>
        <translation>Laden der Unterhaltungsliste</translation>
    </message>
    <message>
        <source>start the agent runtime</source>
        <translation>Starten der Agent-Laufzeit</translation>
    </message>
    <message>
        <source>show the conversation&apos;s images</source>
        <translation>Anzeigen der Bilder der Unterhaltung</translation>
    </message>
    <message>
        <source>resume the conversation</source>
        <translation>Fortsetzen der Unterhaltung</translation>
    </message>
    <message>
        <source>send the message</source>
        <translation>Senden der Nachricht</translation>
    </message>
    <message>
        <source>stop the task</source>
        <translation>Anhalten der Aufgabe</translation>
    </message>
    <message>
        <source>resume the session</source>
        <translation>Fortsetzen der Sitzung</translation>
    </message>
    <message>
        <source>continue in a new session</source>
        <translation>Fortfahren in einer neuen Sitzung</translation>
    </message>
    <message>
        <source>restart the agent runtime</source>
        <translation>Neustart der Agent-Laufzeit</translation>
    </message>
    <message>
        <source>send your decision</source>
        <translation>Senden Ihrer Entscheidung</translation>
    </message>
    <message>
        <source>send your answer to the MCP server</source>
        <translation>Senden Ihrer Antwort an den MCP-Server</translation>
    </message>
    <message>
        <source>list the MCP servers</source>
        <translation>Auflisten der MCP-Server</translation>
    </message>
    <message>
        <source>check the gateway settings</source>
        <translation>Prüfen der Gateway-Einstellungen</translation>
    </message>
</context>
<context>
    <name>Export</name>
    <message>
        <source>- Project folder: {folder}</source>
        <translation>- Projektordner: {folder}</translation>
    </message>
    <message>
        <source>- General chat</source>
        <translation>- Allgemeiner Chat</translation>
    </message>
    <message>
        <source>- Exported: {when}</source>
        <translation>- Exportiert: {when}</translation>
    </message>
    <message>
        <source>Choose a file name ending in .md or .json (not {name}).</source>
        <translation>Wählen Sie einen Dateinamen, der auf .md oder .json endet (nicht {name}).</translation>
    </message>
    <message>
        <source>{path} could not be written: {reason}.</source>
        <translation>{path} konnte nicht geschrieben werden: {reason}.</translation>
    </message>
    <message>
        <source>## You</source>
        <translation>## Sie</translation>
    </message>
    <message>
        <source>## Assistant</source>
        <translation>## Assistent</translation>
    </message>
    <message>
        <source>**Tool call:** `{tool}`</source>
        <translation>**Werkzeugaufruf:** `{tool}`</translation>
    </message>
    <message>
        <source>**Result of `{tool}`**</source>
        <translation>**Ergebnis von `{tool}`**</translation>
    </message>
</context>
<context>
    <name>ExportConversation</name>
    <message>
        <source>Export Conversation</source>
        <translation>Unterhaltung exportieren</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
</context>
<context>
    <name>Header</name>
    <message>
        <source>No tokens used yet</source>
        <translation>Noch keine Tokens verbraucht</translation>
    </message>
    <message>
        <source>{tokens} tokens</source>
        <translation>{tokens} Tokens</translation>
    </message>
    <message>
        <source>≈ {cost}</source>
        <translation>≈ {cost}</translation>
    </message>
    <message>
        <source>unknown price ({models})</source>
        <translation>unbekannter Preis ({models})</translation>
    </message>
    <message>
        <source>The tokens and estimated cost of this conversation appear here.</source>
        <translation>Hier erscheinen die Tokens und die geschätzten Kosten dieser Unterhaltung.</translation>
    </message>
    <message>
        <source>unknown price: add it in Settings → Prices</source>
        <translation>unbekannter Preis: Tragen Sie ihn unter Einstellungen → Preise ein</translation>
    </message>
    <message>
        <source>{model}: {input} input, {output} output, {cache_read} cache read, {cache_write} cache write tokens in {calls} calls — {cost}</source>
        <translation>{model}: {input} Eingabe-, {output} Ausgabe-, {cache_read} Cache-Lese- und {cache_write} Cache-Schreib-Tokens in {calls} Aufrufen — {cost}</translation>
    </message>
    <message>
        <source>Estimated from the price table in Settings; your provider&apos;s bill is final.</source>
        <translation>Geschätzt anhand der Preistabelle in den Einstellungen; maßgeblich ist die Rechnung Ihres Anbieters.</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <source>Model for the next task</source>
        <translation>Modell für die nächste Aufgabe</translation>
    </message>
    <message>
        <source>The model this conversation&apos;s next task calls. Choose one, or type a model name your gateway serves; the organisation&apos;s policy may refuse it.</source>
        <translation>Das Modell, das die nächste Aufgabe dieser Unterhaltung aufruft. Wählen Sie eines aus oder geben Sie einen Modellnamen ein, den Ihr Gateway anbietet; die Richtlinie der Organisation kann ihn ablehnen.</translation>
    </message>
    <message>
        <source>via {gateway}</source>
        <translation>über {gateway}</translation>
    </message>
    <message>
        <source>LLM gateway: {endpoint}</source>
        <translation>LLM-Gateway: {endpoint}</translation>
    </message>
    <message>
        <source>gateway chosen when the conversation starts</source>
        <translation>Gateway wird beim Start der Unterhaltung gewählt</translation>
    </message>
    <message>
        <source> · last answer by {model}</source>
        <translation> · letzte Antwort von {model}</translation>
    </message>
</context>
<context>
    <name>LogsFolder</name>
    <message>
        <source>Logs Folder — Cowork</source>
        <translation>Protokollordner — Cowork</translation>
    </message>
    <message>
        <source>No file manager opened the logs folder. It is here; copy the path to open it yourself or to attach the logs to a report:</source>
        <translation>Kein Dateimanager hat den Protokollordner geöffnet. Er befindet sich hier; kopieren Sie den Pfad, um ihn selbst zu öffnen oder die Protokolle einem Bericht beizufügen:</translation>
    </message>
    <message>
        <source>Logs folder path</source>
        <translation>Pfad des Protokollordners</translation>
    </message>
    <message>
        <source>&amp;Copy Path</source>
        <translation>Pfad &amp;kopieren</translation>
    </message>
    <message>
        <source>Copy the logs folder path</source>
        <translation>Den Pfad des Protokollordners kopieren</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>the updater could not start (the log in {folder} says why)</source>
        <translation>die Aktualisierung konnte nicht starten (das Protokoll in {folder} nennt den Grund)</translation>
    </message>
    <message>
        <source>{problem} Open Settings to fix it.</source>
        <translation>{problem} Öffnen Sie die Einstellungen, um das zu beheben.</translation>
    </message>
    <message>
        <source>Cowork could not start: {problem}</source>
        <translation>Cowork konnte nicht starten: {problem}</translation>
    </message>
    <message>
        <source>Settings saved. Restart Cowork to switch to the new backend; new conversations use the new model settings from their next task.</source>
        <translation>Einstellungen gespeichert. Starten Sie Cowork neu, um zum neuen Backend zu wechseln; neue Unterhaltungen verwenden die neuen Modelleinstellungen ab ihrer nächsten Aufgabe.</translation>
    </message>
    <message>
        <source>New Conversation in a &amp;Folder…</source>
        <translation>Neue Unterhaltung in einem &amp;Ordner…</translation>
    </message>
    <message>
        <source>New &amp;General Chat</source>
        <translation>Neuer &amp;allgemeiner Chat</translation>
    </message>
    <message>
        <source>&amp;Close Conversation</source>
        <translation>Unterhaltung &amp;schließen</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>&amp;Einstellungen…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>&amp;Send</source>
        <translation>&amp;Senden</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>&amp;Anhalten</translation>
    </message>
    <message>
        <source>&amp;Review Changes…</source>
        <translation>Änderungen &amp;prüfen…</translation>
    </message>
    <message>
        <source>&amp;Edit Last Prompt</source>
        <translation>Letzte Eingabe &amp;bearbeiten</translation>
    </message>
    <message>
        <source>Re&amp;try Last Task</source>
        <translation>Letzte Aufgabe &amp;wiederholen</translation>
    </message>
    <message>
        <source>&amp;Find Conversation</source>
        <translation>Unterhaltung &amp;finden</translation>
    </message>
    <message>
        <source>Open &amp;Logs Folder</source>
        <translation>&amp;Protokollordner öffnen</translation>
    </message>
    <message>
        <source>Check for Runtime &amp;Updates</source>
        <translation>Nach Laufzeit-&amp;Updates suchen</translation>
    </message>
    <message>
        <source>&amp;About Cowork</source>
        <translation>&amp;Über Cowork</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <source>&amp;Conversation</source>
        <translation>&amp;Unterhaltung</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>Loading conversations…</source>
        <translation>Unterhaltungen werden geladen…</translation>
    </message>
    <message>
        <source>Check for a newer agent runtime now</source>
        <translation>Jetzt nach einer neueren Agent-Laufzeit suchen</translation>
    </message>
    <message>
        <source>Runtime updates are off: {reason}.</source>
        <translation>Laufzeit-Updates sind ausgeschaltet: {reason}.</translation>
    </message>
    <message>
        <source>Choose the project folder</source>
        <translation>Projektordner wählen</translation>
    </message>
    <message>
        <source>{refusal}. This installation has no runtime update source (update.json or COWORK_UPDATE_MANIFEST_URL): install a compatible runtime or Cowork version by hand.</source>
        <translation>{refusal}. Diese Installation hat keine Quelle für Laufzeit-Updates (update.json oder COWORK_UPDATE_MANIFEST_URL): Installieren Sie eine kompatible Laufzeit oder Cowork-Version von Hand.</translation>
    </message>
    <message>
        <source>Runtime {version} is installed; the session starts with it.</source>
        <translation>Laufzeit {version} ist installiert; die Sitzung startet damit.</translation>
    </message>
    <message>
        <source>About Cowork</source>
        <translation>Über Cowork</translation>
    </message>
    <message>
        <source>No conversation open</source>
        <translation>Keine Unterhaltung geöffnet</translation>
    </message>
    <message>
        <source>General chat</source>
        <translation>Allgemeiner Chat</translation>
    </message>
    <message>
        <source>A conversation without a project folder</source>
        <translation>Eine Unterhaltung ohne Projektordner</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>Neue Unterhaltung</translation>
    </message>
    <message>
        <source>Quit Cowork</source>
        <translation>Cowork beenden</translation>
    </message>
    <message>
        <source>A task is still running. Stop it and quit?</source>
        <translation>Eine Aufgabe läuft noch. Anhalten und beenden?</translation>
    </message>
    <message>
        <source>Cowork cancels the task and waits for the step in progress to end — a command that is running is allowed to finish — then shuts everything down. The conversation stays in the sidebar.</source>
        <translation>Cowork bricht die Aufgabe ab und wartet, bis der laufende Schritt endet — ein laufender Befehl darf zu Ende laufen —, dann wird alles beendet. Die Unterhaltung bleibt in der Seitenleiste.</translation>
    </message>
    <message>
        <source>Stop the task and quit</source>
        <translation>Aufgabe anhalten und beenden</translation>
    </message>
    <message>
        <source>Stopping the running task before Cowork quits: the step in progress ends first (a running command is allowed to finish), then everything shuts down.</source>
        <translation>Die laufende Aufgabe wird angehalten, bevor Cowork beendet wird: Zuerst endet der laufende Schritt (ein laufender Befehl darf zu Ende laufen), dann wird alles beendet.</translation>
    </message>
</context>
<context>
    <name>McpForm</name>
    <message>
        <source>{field} must be an email address (name@example.com).</source>
        <translation>{field} muss eine E-Mail-Adresse sein (name@example.com).</translation>
    </message>
    <message>
        <source>{field} must be an absolute address such as https://example.com/.</source>
        <translation>{field} muss eine absolute Adresse sein, etwa https://example.com/.</translation>
    </message>
    <message>
        <source>{field} must be a date written YYYY-MM-DD.</source>
        <translation>{field} muss ein Datum im Format JJJJ-MM-TT (YYYY-MM-DD) sein.</translation>
    </message>
    <message>
        <source>{field} must be a date and time written YYYY-MM-DDThh:mm:ss with a time zone (Z or +01:00).</source>
        <translation>{field} muss Datum und Uhrzeit im Format YYYY-MM-DDThh:mm:ss mit Zeitzone (Z oder +01:00) sein.</translation>
    </message>
    <message>
        <source>its schema is not an object</source>
        <translation>sein Schema ist kein Objekt</translation>
    </message>
    <message>
        <source>it offers no choices</source>
        <translation>es bietet keine Auswahl</translation>
    </message>
    <message>
        <source>it is a list of something other than choices</source>
        <translation>es ist eine Liste von etwas anderem als Auswahlmöglichkeiten</translation>
    </message>
    <message>
        <source>values of type {kind} cannot be entered in a form</source>
        <translation>Werte vom Typ {kind} können nicht in einem Formular eingegeben werden</translation>
    </message>
    <message>
        <source>The server&apos;s request does not describe a form Cowork can show.</source>
        <translation>Die Anfrage des Servers beschreibt kein Formular, das Cowork anzeigen kann.</translation>
    </message>
    <message>
        <source>{field} cannot be answered here: {reason}.</source>
        <translation>{field} kann hier nicht beantwortet werden: {reason}.</translation>
    </message>
    <message>
        <source>{field} must be on or off.</source>
        <translation>{field} muss ein- oder ausgeschaltet sein.</translation>
    </message>
    <message>
        <source>Choose {field}.</source>
        <translation>Wählen Sie {field}.</translation>
    </message>
    <message>
        <source>{field} must be one of the choices offered.</source>
        <translation>{field} muss eine der angebotenen Möglichkeiten sein.</translation>
    </message>
    <message>
        <source>{field} needs at least 1 character.</source>
        <translation>{field} braucht mindestens 1 Zeichen.</translation>
    </message>
    <message>
        <source>{field} needs at least {count} characters.</source>
        <translation>{field} braucht mindestens {count} Zeichen.</translation>
    </message>
    <message>
        <source>{field} takes at most 1 character.</source>
        <translation>{field} darf höchstens 1 Zeichen haben.</translation>
    </message>
    <message>
        <source>{field} takes at most {count} characters.</source>
        <translation>{field} darf höchstens {count} Zeichen haben.</translation>
    </message>
    <message>
        <source>{field} must be a number.</source>
        <translation>{field} muss eine Zahl sein.</translation>
    </message>
    <message>
        <source>{field} must be a whole number.</source>
        <translation>{field} muss eine ganze Zahl sein.</translation>
    </message>
    <message>
        <source>{field} must be at least {number}.</source>
        <translation>{field} muss mindestens {number} sein.</translation>
    </message>
    <message>
        <source>{field} must be at most {number}.</source>
        <translation>{field} darf höchstens {number} sein.</translation>
    </message>
    <message>
        <source>{field} may only hold the choices offered.</source>
        <translation>{field} darf nur die angebotenen Möglichkeiten enthalten.</translation>
    </message>
    <message>
        <source>Choose at least one {field}.</source>
        <translation>Wählen Sie mindestens einen Eintrag für {field}.</translation>
    </message>
    <message>
        <source>Choose at least {count} for {field}.</source>
        <translation>Wählen Sie mindestens {count} für {field}.</translation>
    </message>
    <message>
        <source>Choose at most {count} for {field}.</source>
        <translation>Wählen Sie höchstens {count} für {field}.</translation>
    </message>
    <message>
        <source>{field} is required.</source>
        <translation>{field} ist erforderlich.</translation>
    </message>
</context>
<context>
    <name>McpServers</name>
    <message>
        <source>The server gave no address to sign in at.</source>
        <translation>Der Server hat keine Adresse zum Anmelden angegeben.</translation>
    </message>
    <message>
        <source>The sign-in address holds spaces or control characters, so Cowork did not open it.</source>
        <translation>Die Anmeldeadresse enthält Leer- oder Steuerzeichen, daher hat Cowork sie nicht geöffnet.</translation>
    </message>
    <message>
        <source>The sign-in address is not a valid web address, so Cowork did not open it.</source>
        <translation>Die Anmeldeadresse ist keine gültige Webadresse, daher hat Cowork sie nicht geöffnet.</translation>
    </message>
    <message>
        <source>The sign-in address names no server, so Cowork did not open it.</source>
        <translation>Die Anmeldeadresse nennt keinen Server, daher hat Cowork sie nicht geöffnet.</translation>
    </message>
    <message>
        <source>The sign-in address holds a user name or password, so Cowork did not open it.</source>
        <translation>Die Anmeldeadresse enthält einen Benutzernamen oder ein Passwort, daher hat Cowork sie nicht geöffnet.</translation>
    </message>
    <message>
        <source>The sign-in address is plain http:// to another computer, so Cowork did not open it.</source>
        <translation>Die Anmeldeadresse ist unverschlüsseltes http:// zu einem anderen Computer, daher hat Cowork sie nicht geöffnet.</translation>
    </message>
    <message>
        <source>The sign-in address is not an https:// web page ({scheme}:), so Cowork did not open it.</source>
        <translation>Die Anmeldeadresse ist keine https://-Webseite ({scheme}:), daher hat Cowork sie nicht geöffnet.</translation>
    </message>
    <message>
        <source>No MCP servers in this conversation. Servers come from your organisation&apos;s policy and from the project&apos;s .cowork/mcp.json file; a conversation connects to them when it starts.</source>
        <translation>Keine MCP-Server in dieser Unterhaltung. Server stammen aus der Richtlinie Ihrer Organisation und aus der Datei .cowork/mcp.json des Projekts; eine Unterhaltung verbindet sich beim Start mit ihnen.</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Verbindung wird hergestellt…</translation>
    </message>
    <message>
        <source>Connected</source>
        <translation>Verbunden</translation>
    </message>
    <message>
        <source>Unavailable</source>
        <translation>Nicht verfügbar</translation>
    </message>
    <message>
        <source>Closed</source>
        <translation>Geschlossen</translation>
    </message>
    <message>
        <source>Waiting for you to sign in</source>
        <translation>Wartet auf Ihre Anmeldung</translation>
    </message>
    <message>
        <source>Unknown</source>
        <translation>Unbekannt</translation>
    </message>
    <message>
        <source>Organisation policy</source>
        <translation>Richtlinie der Organisation</translation>
    </message>
    <message>
        <source>Project (.cowork/mcp.json)</source>
        <translation>Projekt (.cowork/mcp.json)</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>Server</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>Werkzeuge</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <source>Last error</source>
        <translation>Letzter Fehler</translation>
    </message>
    <message>
        <source>Open a conversation to see its MCP servers. Servers come from your organisation&apos;s policy and from the project&apos;s .cowork/mcp.json file.</source>
        <translation>Öffnen Sie eine Unterhaltung, um ihre MCP-Server zu sehen. Server stammen aus der Richtlinie Ihrer Organisation und aus der Datei .cowork/mcp.json des Projekts.</translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation>MCP-Server</translation>
    </message>
    <message>
        <source>Selected server</source>
        <translation>Ausgewählter Server</translation>
    </message>
    <message>
        <source>Problem listing the servers</source>
        <translation>Problem beim Auflisten der Server</translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation>&amp;Aktualisieren</translation>
    </message>
    <message>
        <source>Refresh the MCP servers</source>
        <translation>Die MCP-Server aktualisieren</translation>
    </message>
    <message>
        <source>Ask the conversation&apos;s agent runtime for its MCP servers again</source>
        <translation>Die Agent-Laufzeit der Unterhaltung erneut nach ihren MCP-Servern fragen</translation>
    </message>
    <message>
        <source>MCP servers of the conversation “{name}”</source>
        <translation>MCP-Server der Unterhaltung „{name}“</translation>
    </message>
    <message>
        <source>Asking the conversation&apos;s agent runtime for its MCP servers…</source>
        <translation>Die Agent-Laufzeit der Unterhaltung wird nach ihren MCP-Servern gefragt…</translation>
    </message>
    <message>
        <source>Could not list the servers: {problem}</source>
        <translation>Die Server konnten nicht aufgelistet werden: {problem}</translation>
    </message>
    <message>
        <source>Refreshing…</source>
        <translation>Wird aktualisiert…</translation>
    </message>
    <message>
        <source>Address: {url}</source>
        <translation>Adresse: {url}</translation>
    </message>
    <message>
        <source>Configured in: {source}</source>
        <translation>Konfiguriert in: {source}</translation>
    </message>
    <message>
        <source>MCP version: {version}</source>
        <translation>MCP-Version: {version}</translation>
    </message>
    <message>
        <source>Tools registered: {count}</source>
        <translation>Registrierte Werkzeuge: {count}</translation>
    </message>
    <message>
        <source>Last error: {error}</source>
        <translation>Letzter Fehler: {error}</translation>
    </message>
    <message>
        <source>Not registered: {tools} (and {count} more)</source>
        <translation>Nicht registriert: {tools} (und {count} weitere)</translation>
    </message>
    <message>
        <source>Not registered: {tools}</source>
        <translation>Nicht registriert: {tools}</translation>
    </message>
    <message>
        <source>Sign-in address</source>
        <translation>Anmeldeadresse</translation>
    </message>
    <message>
        <source>The sign-in page&apos;s address: select it, or copy it with Copy address</source>
        <translation>Die Adresse der Anmeldeseite: Markieren Sie sie oder kopieren Sie sie mit „Adresse kopieren“</translation>
    </message>
    <message>
        <source>Open the sign-in page in your browser</source>
        <translation>Die Anmeldeseite in Ihrem Browser öffnen</translation>
    </message>
    <message>
        <source>Copy address</source>
        <translation>Adresse kopieren</translation>
    </message>
    <message>
        <source>Copy the sign-in address</source>
        <translation>Die Anmeldeadresse kopieren</translation>
    </message>
    <message>
        <source>Sign in to {server}</source>
        <translation>Bei {server} anmelden</translation>
    </message>
    <message>
        <source>Sign in to {server} in your browser: its sign-in page on {host} was opened there. The tool call goes on once you have signed in.</source>
        <translation>Melden Sie sich in Ihrem Browser bei {server} an: Die Anmeldeseite auf {host} wurde dort geöffnet. Der Werkzeugaufruf geht weiter, sobald Sie angemeldet sind.</translation>
    </message>
    <message>
        <source>Sign in to {server} in your browser: its sign-in page was opened there. The tool call goes on once you have signed in.</source>
        <translation>Melden Sie sich in Ihrem Browser bei {server} an: Die Anmeldeseite wurde dort geöffnet. Der Werkzeugaufruf geht weiter, sobald Sie angemeldet sind.</translation>
    </message>
    <message>
        <source>{server} needs you to sign in on {host}.</source>
        <translation>{server} erfordert Ihre Anmeldung auf {host}.</translation>
    </message>
    <message>
        <source>{server} needs you to sign in.</source>
        <translation>{server} erfordert Ihre Anmeldung.</translation>
    </message>
    <message>
        <source>Open again</source>
        <translation>Erneut öffnen</translation>
    </message>
    <message>
        <source>Open in browser</source>
        <translation>Im Browser öffnen</translation>
    </message>
    <message>
        <source>Cowork could not open your browser. Open the address yourself.</source>
        <translation>Cowork konnte Ihren Browser nicht öffnen. Öffnen Sie die Adresse selbst.</translation>
    </message>
    <message>
        <source>an MCP server</source>
        <translation>ein MCP-Server</translation>
    </message>
    <message>
        <source>Cowork could not open your browser. Open the address below yourself.</source>
        <translation>Cowork konnte Ihren Browser nicht öffnen. Öffnen Sie die Adresse unten selbst.</translation>
    </message>
    <message>
        <source>Open the address below in your browser.</source>
        <translation>Öffnen Sie die Adresse unten in Ihrem Browser.</translation>
    </message>
    <message>
        <source>Your answer did not reach the MCP server: its request was no longer waiting (it timed out or its tool call ended).</source>
        <translation>Ihre Antwort hat den MCP-Server nicht erreicht: Seine Anfrage wartete nicht mehr (sie ist abgelaufen oder ihr Werkzeugaufruf wurde beendet).</translation>
    </message>
    <message>
        <source>The conversation&apos;s agent runtime is not running; its MCP servers are listed once it starts (send a message).</source>
        <translation>Die Agent-Laufzeit der Unterhaltung läuft nicht; ihre MCP-Server werden aufgelistet, sobald sie startet (senden Sie eine Nachricht).</translation>
    </message>
    <message>
        <source>This conversation&apos;s agent runtime does not support MCP servers.</source>
        <translation>Die Agent-Laufzeit dieser Unterhaltung unterstützt keine MCP-Server.</translation>
    </message>
    <message>
        <source>The agent runtime did not answer ({problem}).</source>
        <translation>Die Agent-Laufzeit hat nicht geantwortet ({problem}).</translation>
    </message>
    <message>
        <source>{done} of {total}</source>
        <translation>{done} von {total}</translation>
    </message>
    <message>
        <source>{done} done</source>
        <translation>{done} erledigt</translation>
    </message>
    <message>
        <source>The MCP server {name} is unavailable: {reason}. Its tools answer with an error for now; Cowork tries it again on a later call.</source>
        <translation>Der MCP-Server {name} ist nicht verfügbar: {reason}. Seine Werkzeuge antworten vorerst mit einem Fehler; Cowork versucht es bei einem späteren Aufruf erneut.</translation>
    </message>
    <message>
        <source>The MCP server {name} is unavailable. Its tools answer with an error for now; Cowork tries it again on a later call.</source>
        <translation>Der MCP-Server {name} ist nicht verfügbar. Seine Werkzeuge antworten vorerst mit einem Fehler; Cowork versucht es bei einem späteren Aufruf erneut.</translation>
    </message>
    <message>
        <source>The MCP server {name} is available again.</source>
        <translation>Der MCP-Server {name} ist wieder verfügbar.</translation>
    </message>
    <message>
        <source>a server configuration was not used</source>
        <translation>eine Serverkonfiguration wurde nicht verwendet</translation>
    </message>
    <message>
        <source>MCP configuration not used (in {file}): {problem}.</source>
        <translation>MCP-Konfiguration nicht verwendet (in {file}): {problem}.</translation>
    </message>
    <message>
        <source>MCP configuration not used (in your organisation&apos;s policy): {problem}.</source>
        <translation>MCP-Konfiguration nicht verwendet (in der Richtlinie Ihrer Organisation): {problem}.</translation>
    </message>
    <message>
        <source>MCP configuration not used: {problem}.</source>
        <translation>MCP-Konfiguration nicht verwendet: {problem}.</translation>
    </message>
</context>
<context>
    <name>Notifications</name>
    <message>
        <source>Task finished</source>
        <extracomment>Notification servers cut long bodies themselves, badly; a sentence or two is what fits.</extracomment>
        <translation>Aufgabe abgeschlossen</translation>
    </message>
    <message>
        <source>{conversation}: done.</source>
        <translation>{conversation}: erledigt.</translation>
    </message>
    <message>
        <source>{conversation}: the task stopped.</source>
        <translation>{conversation}: Die Aufgabe wurde beendet.</translation>
    </message>
    <message>
        <source>Task failed</source>
        <translation>Aufgabe fehlgeschlagen</translation>
    </message>
    <message>
        <source>{conversation}: {action}</source>
        <translation>{conversation}: {action}</translation>
    </message>
    <message>
        <source>an action</source>
        <translation>eine Aktion</translation>
    </message>
    <message>
        <source>Approval needed</source>
        <translation>Genehmigung erforderlich</translation>
    </message>
    <message>
        <source>{conversation}: {server} asks for your input.</source>
        <translation>{conversation}: {server} bittet um Ihre Eingabe.</translation>
    </message>
    <message>
        <source>Input needed</source>
        <translation>Eingabe erforderlich</translation>
    </message>
    <message>
        <source>&amp;Notify When in the Background</source>
        <translation>Im Hintergrund be&amp;nachrichtigen</translation>
    </message>
    <message>
        <source>Tell me through the system when a task finishes or needs me while Cowork is not in front</source>
        <translation>Über das System benachrichtigen, wenn eine Aufgabe fertig ist oder mich braucht, während Cowork nicht im Vordergrund ist</translation>
    </message>
    <message>
        <source>General chat</source>
        <translation>Allgemeiner Chat</translation>
    </message>
</context>
<context>
    <name>PatchPreview</name>
    <message>
        <source>Files changed by commands the agent ran are not listed here.</source>
        <translation>Dateien, die von Befehlen des Agenten geändert wurden, sind hier nicht aufgeführt.</translation>
    </message>
    <message>
        <source>Changes — Cowork</source>
        <translation>Änderungen — Cowork</translation>
    </message>
    <message>
        <source>Changed files</source>
        <translation>Geänderte Dateien</translation>
    </message>
    <message>
        <source>Diff</source>
        <translation>Diff</translation>
    </message>
    <message>
        <source>&amp;Open in editor</source>
        <translation>Im Editor ö&amp;ffnen</translation>
    </message>
    <message>
        <source>Open the selected file (Enter, Ctrl+O)</source>
        <translation>Die ausgewählte Datei öffnen (Eingabe, Strg+O)</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>The changes cannot be shown: {problem}.</source>
        <translation>Die Änderungen können nicht angezeigt werden: {problem}.</translation>
    </message>
    <message>
        <source> 1 entry could not be read.</source>
        <translation> 1 Eintrag konnte nicht gelesen werden.</translation>
    </message>
    <message>
        <source> {count} entries could not be read.</source>
        <translation> {count} Einträge konnten nicht gelesen werden.</translation>
    </message>
    <message>
        <source>No files changed in this conversation yet.</source>
        <translation>In dieser Unterhaltung wurden noch keine Dateien geändert.</translation>
    </message>
    <message>
        <source>+{added} −{removed} lines</source>
        <translation>+{added} −{removed} Zeilen</translation>
    </message>
    <message>
        <source>No line-by-line diff for this file; open it to see it.</source>
        <translation>Für diese Datei gibt es keinen zeilenweisen Diff; öffnen Sie sie, um sie anzusehen.</translation>
    </message>
    <message>
        <source>A deleted file cannot be opened</source>
        <translation>Eine gelöschte Datei kann nicht geöffnet werden</translation>
    </message>
    <message>
        <source>Open the selected file</source>
        <translation>Die ausgewählte Datei öffnen</translation>
    </message>
    <message>
        <source>No application on this computer opened {path}.</source>
        <translation>Keine Anwendung auf diesem Computer hat {path} geöffnet.</translation>
    </message>
    <message>
        <source>{count} created</source>
        <translation>{count} erstellt</translation>
    </message>
    <message>
        <source>{count} modified</source>
        <translation>{count} geändert</translation>
    </message>
    <message>
        <source>{count} deleted</source>
        <translation>{count} gelöscht</translation>
    </message>
    <message>
        <source>1 file changed</source>
        <translation>1 Datei geändert</translation>
    </message>
    <message>
        <source>{count} files changed</source>
        <translation>{count} Dateien geändert</translation>
    </message>
    <message>
        <source>{files}: {parts} (+{added} −{removed} lines)</source>
        <translation>{files}: {parts} (+{added} −{removed} Zeilen)</translation>
    </message>
    <message>
        <source>1 byte</source>
        <translation>1 Byte</translation>
    </message>
    <message>
        <source>{count} bytes</source>
        <translation>{count} Byte</translation>
    </message>
    <message>
        <source>created</source>
        <extracomment>Past these a diff is cut for display (the runtime already summarises any diff over 1 MiB): a text view with syntax highlighting stays responsive, and the editor is one click away for the rest.</extracomment>
        <translation>erstellt</translation>
    </message>
    <message>
        <source>modified</source>
        <translation>geändert</translation>
    </message>
    <message>
        <source>deleted</source>
        <translation>gelöscht</translation>
    </message>
    <message>
        <source>changed</source>
        <translation>geändert</translation>
    </message>
    <message>
        <source>Its earlier content is not kept on this computer, so it cannot be reverted.</source>
        <translation>Ihr früherer Inhalt ist auf diesem Computer nicht gespeichert, daher kann sie nicht zurückgesetzt werden.</translation>
    </message>
    <message>
        <source>{path} (removed)</source>
        <translation>{path} (entfernt)</translation>
    </message>
    <message>
        <source>… {count} more lines not shown here: open the file in the editor to see it all.</source>
        <translation>… {count} weitere Zeilen werden hier nicht angezeigt: Öffnen Sie die Datei im Editor, um alles zu sehen.</translation>
    </message>
    <message>
        <source>{path} was deleted: there is no file to open.</source>
        <translation>{path} wurde gelöscht: Es gibt keine Datei zum Öffnen.</translation>
    </message>
    <message>
        <source>{path} has no folder to be found in.</source>
        <translation>Für {path} gibt es keinen Ordner, in dem die Datei liegt.</translation>
    </message>
    <message>
        <source>{path} no longer exists.</source>
        <translation>{path} existiert nicht mehr.</translation>
    </message>
    <message>
        <source>Opened the folder of {name}: the system would run this file, not show it.</source>
        <translation>Der Ordner von {name} wurde geöffnet: Das System würde diese Datei ausführen, nicht anzeigen.</translation>
    </message>
    <message>
        <source>Reverted: {files}.</source>
        <translation>Zurückgesetzt: {files}.</translation>
    </message>
    <message>
        <source>&amp;Revert file</source>
        <extracomment>Files named in a confirmation; the rest are counted.</extracomment>
        <translation>Datei &amp;zurücksetzen</translation>
    </message>
    <message>
        <source>Revert the selected file</source>
        <translation>Die ausgewählte Datei zurücksetzen</translation>
    </message>
    <message>
        <source>Revert &amp;task</source>
        <translation>&amp;Aufgabe zurücksetzen</translation>
    </message>
    <message>
        <source>Revert every file of the task that last changed the selected file</source>
        <translation>Alle Dateien der Aufgabe zurücksetzen, die die ausgewählte Datei zuletzt geändert hat</translation>
    </message>
    <message>
        <source>Revert is not available for this file.</source>
        <translation>Zurücksetzen ist für diese Datei nicht möglich.</translation>
    </message>
    <message>
        <source>Put this file back to how it was before the agent changed it</source>
        <translation>Diese Datei in den Zustand zurückversetzen, den sie vor der Änderung durch den Agenten hatte</translation>
    </message>
    <message>
        <source>Put back every file of the last task that changed this one</source>
        <translation>Alle Dateien der letzten Aufgabe zurückversetzen, die diese Datei geändert hat</translation>
    </message>
    <message>
        <source>Put {file} back to how it was before the agent changed it? Its current content is replaced.</source>
        <translation>{file} in den Zustand vor der Änderung durch den Agenten zurückversetzen? Der aktuelle Inhalt wird ersetzt.</translation>
    </message>
    <message>
        <source>and {count} more</source>
        <translation>und {count} weitere</translation>
    </message>
    <message>
        <source>Put back every file the task changed, as it was before the task: {files}?</source>
        <translation>Alle von der Aufgabe geänderten Dateien in den Zustand vor der Aufgabe zurückversetzen: {files}?</translation>
    </message>
    <message>
        <source>Revert changes — Cowork</source>
        <translation>Änderungen zurücksetzen — Cowork</translation>
    </message>
    <message>
        <source>Revert</source>
        <translation>Zurücksetzen</translation>
    </message>
    <message>
        <source>Confirm the revert</source>
        <translation>Das Zurücksetzen bestätigen</translation>
    </message>
    <message>
        <source>Reverting…</source>
        <translation>Wird zurückgesetzt…</translation>
    </message>
</context>
<context>
    <name>PlatformCheck</name>
    <message>
        <source>Cowork cannot open its window: Qt&apos;s X11 (xcb) platform needs system libraries that are not installed: {names}.
Install them, then start Cowork again:
  Debian/Ubuntu:  sudo apt install {debian}
  Fedora/RHEL:    sudo dnf install {fedora}
On a Wayland desktop, QT_QPA_PLATFORM=wayland uses Wayland instead; without a display, &apos;cowork exec&apos; runs a task in the terminal.</source>
        <translation>Cowork kann sein Fenster nicht öffnen: Die X11-Plattform (xcb) von Qt benötigt Systembibliotheken, die nicht installiert sind: {names}.
Installieren Sie sie und starten Sie Cowork dann erneut:
  Debian/Ubuntu:  sudo apt install {debian}
  Fedora/RHEL:    sudo dnf install {fedora}
Auf einem Wayland-Desktop verwendet QT_QPA_PLATFORM=wayland stattdessen Wayland; ohne Bildschirm führt &apos;cowork exec&apos; eine Aufgabe im Terminal aus.</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>Claude models through Anthropic&apos;s API. Needs an API key from console.anthropic.com.</source>
        <translation>Claude-Modelle über die API von Anthropic. Benötigt einen API-Schlüssel von console.anthropic.com.</translation>
    </message>
    <message>
        <source>GPT models through OpenAI&apos;s API. Needs an API key from platform.openai.com.</source>
        <translation>GPT-Modelle über die API von OpenAI. Benötigt einen API-Schlüssel von platform.openai.com.</translation>
    </message>
    <message>
        <source>Models running on this computer with Ollama: no key, nothing leaves the machine. Choose a model that supports tool calls and that you have pulled.</source>
        <translation>Modelle, die mit Ollama auf diesem Computer laufen: kein Schlüssel, nichts verlässt den Rechner. Wählen Sie ein Modell, das Werkzeugaufrufe unterstützt und das Sie heruntergeladen haben.</translation>
    </message>
    <message>
        <source>Your LiteLLM proxy, in front of any provider. Use a model name the proxy serves and its key, if it asks for one.</source>
        <translation>Ihr LiteLLM-Proxy vor einem beliebigen Anbieter. Verwenden Sie einen Modellnamen, den der Proxy anbietet, und seinen Schlüssel, falls er einen verlangt.</translation>
    </message>
    <message>
        <source>Offline demo model (not a real LLM)</source>
        <translation>Offline-Demomodell (kein echtes LLM)</translation>
    </message>
    <message>
        <source>Scripted replies, to try Cowork without an account or a network: it is NOT a real LLM. It reads a file whose path you type, makes a small edit to a demo file of its own (cowork-demo.md) and runs a harmless echo command. Cowork starts it itself.</source>
        <translation>Vorgefertigte Antworten, um Cowork ohne Konto und ohne Netzwerk auszuprobieren: Es ist KEIN echtes LLM. Es liest eine Datei, deren Pfad Sie eingeben, nimmt eine kleine Änderung an einer eigenen Demodatei (cowork-demo.md) vor und führt einen harmlosen echo-Befehl aus. Cowork startet es selbst.</translation>
    </message>
</context>
<context>
    <name>Prices</name>
    <message>
        <source>US dollars per million tokens, for the estimated cost shown above each conversation. Leave a cache price empty to count cache tokens at the input price. A model missing here shows an unknown price.</source>
        <translation>US-Dollar pro Million Tokens, für die geschätzten Kosten über jeder Unterhaltung. Lassen Sie einen Cache-Preis leer, um Cache-Tokens zum Eingabepreis zu zählen. Für ein hier fehlendes Modell wird ein unbekannter Preis angezeigt.</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>Eingabe</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>Ausgabe</translation>
    </message>
    <message>
        <source>Cache read</source>
        <translation>Cache-Lesen</translation>
    </message>
    <message>
        <source>Cache write</source>
        <translation>Cache-Schreiben</translation>
    </message>
    <message>
        <source>Prices per million tokens</source>
        <translation>Preise pro Million Tokens</translation>
    </message>
    <message>
        <source>&amp;Add Model</source>
        <translation>Modell &amp;hinzufügen</translation>
    </message>
    <message>
        <source>Add a model&apos;s prices</source>
        <translation>Die Preise eines Modells hinzufügen</translation>
    </message>
    <message>
        <source>&amp;Remove</source>
        <translation>&amp;Entfernen</translation>
    </message>
    <message>
        <source>Remove the selected model&apos;s prices</source>
        <translation>Die Preise des ausgewählten Modells entfernen</translation>
    </message>
    <message>
        <source>Restore &amp;Defaults</source>
        <translation>&amp;Standardwerte wiederherstellen</translation>
    </message>
    <message>
        <source>Restore the default prices</source>
        <translation>Die Standardpreise wiederherstellen</translation>
    </message>
    <message>
        <source>Row {row} has prices but no model name.</source>
        <translation>Zeile {row} hat Preise, aber keinen Modellnamen.</translation>
    </message>
    <message>
        <source>input</source>
        <translation>Eingabe</translation>
    </message>
    <message>
        <source>output</source>
        <translation>Ausgabe</translation>
    </message>
    <message>
        <source>cache read</source>
        <translation>Cache-Lese</translation>
    </message>
    <message>
        <source>cache write</source>
        <translation>Cache-Schreib</translation>
    </message>
    <message>
        <source>Enter the {what} price of {model}.</source>
        <translation>Geben Sie den {what}preis von {model} ein.</translation>
    </message>
    <message>
        <source>The {what} price of {model} is not a number: {text}</source>
        <translation>Der {what}preis von {model} ist keine Zahl: {text}</translation>
    </message>
    <message>
        <source>prices that are not an object of models</source>
        <translation>Preise, die kein Objekt aus Modellen sind</translation>
    </message>
    <message>
        <source>a model name must be 1 to {count} characters</source>
        <translation>ein Modellname muss 1 bis {count} Zeichen lang sein</translation>
    </message>
    <message>
        <source>the model {model} is listed twice</source>
        <translation>das Modell {model} ist doppelt aufgeführt</translation>
    </message>
    <message>
        <source>the prices of {model} must be numbers from 0 to {most} dollars per million tokens</source>
        <translation>die Preise von {model} müssen Zahlen von 0 bis {most} Dollar pro Million Tokens sein</translation>
    </message>
    <message>
        <source>the price of {model} is not an object</source>
        <translation>der Preis von {model} ist kein Objekt</translation>
    </message>
    <message>
        <source>the {kind} price of {model} is not a number</source>
        <translation>der Preis „{kind}“ von {model} ist keine Zahl</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>Ask before risky actions (recommended)</source>
        <translation>Vor riskanten Aktionen fragen (empfohlen)</translation>
    </message>
    <message>
        <source>Ask before every action</source>
        <translation>Vor jeder Aktion fragen</translation>
    </message>
    <message>
        <source>Never ask (the policy still blocks what it forbids)</source>
        <translation>Nie fragen (die Richtlinie blockiert weiterhin, was sie verbietet)</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>Remove the saved token</source>
        <translation>Das gespeicherte Token entfernen</translation>
    </message>
    <message>
        <source>No OS keychain</source>
        <translation>Kein Schlüsselbund des Betriebssystems</translation>
    </message>
    <message>
        <source>No usable OS keychain was found ({backend}), so Cowork cannot save a token: it never writes tokens to a file. Set {variable} (with LLM_GATEWAY_ENDPOINT and LLM_GATEWAY_MODEL) in the environment Cowork is started from, or choose a model that needs no token.</source>
        <translation>Es wurde kein nutzbarer Schlüsselbund des Betriebssystems gefunden ({backend}), daher kann Cowork kein Token speichern: Tokens werden nie in eine Datei geschrieben. Setzen Sie {variable} (mit LLM_GATEWAY_ENDPOINT und LLM_GATEWAY_MODEL) in der Umgebung, aus der Cowork gestartet wird, oder wählen Sie ein Modell, das kein Token benötigt.</translation>
    </message>
    <message>
        <source>No OS keychain: set {variable} in the environment instead.</source>
        <translation>Kein Schlüsselbund des Betriebssystems: Setzen Sie stattdessen {variable} in der Umgebung.</translation>
    </message>
    <message>
        <source>Nothing to set up: Cowork starts the offline demo model itself when a conversation needs it.</source>
        <translation>Nichts einzurichten: Cowork startet das Offline-Demomodell selbst, wenn eine Unterhaltung es braucht.</translation>
    </message>
    <message>
        <source>&amp;Endpoint:</source>
        <translation>&amp;Endpunkt:</translation>
    </message>
    <message>
        <source>&amp;Dialect:</source>
        <translation>&amp;Dialekt:</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>&amp;Token:</translation>
    </message>
    <message>
        <source>Test &amp;Connection</source>
        <translation>Ver&amp;bindung testen</translation>
    </message>
    <message>
        <source>Test the connection to the gateway</source>
        <translation>Die Verbindung zum Gateway testen</translation>
    </message>
    <message>
        <source>Connection test result</source>
        <translation>Ergebnis des Verbindungstests</translation>
    </message>
    <message>
        <source>Enter the endpoint, an http:// or https:// URL, first.</source>
        <translation>Geben Sie zuerst den Endpunkt ein, eine http://- oder https://-URL.</translation>
    </message>
    <message>
        <source>Enter the model to test first.</source>
        <translation>Geben Sie zuerst das zu testende Modell ein.</translation>
    </message>
    <message>
        <source>The connection cannot be tested right now.</source>
        <translation>Die Verbindung kann gerade nicht getestet werden.</translation>
    </message>
    <message>
        <source>Testing the connection…</source>
        <translation>Verbindung wird getestet…</translation>
    </message>
    <message>
        <source>The test failed: {error}</source>
        <translation>Der Test ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>Not saved here: set {variable}</source>
        <translation>Hier nicht gespeichert: Setzen Sie {variable}</translation>
    </message>
    <message>
        <source>Saved in the OS keychain; type to replace it</source>
        <translation>Im Schlüsselbund des Betriebssystems gespeichert; zum Ersetzen neu eingeben</translation>
    </message>
    <message>
        <source>A token for this endpoint is saved in the OS keychain.</source>
        <translation>Für diesen Endpunkt ist ein Token im Schlüsselbund des Betriebssystems gespeichert.</translation>
    </message>
    <message>
        <source>Not needed</source>
        <translation>Nicht erforderlich</translation>
    </message>
    <message>
        <source>Paste the API key</source>
        <translation>API-Schlüssel einfügen</translation>
    </message>
    <message>
        <source>If it asks for one</source>
        <translation>Falls einer verlangt wird</translation>
    </message>
    <message>
        <source>The token is kept in the OS keychain, never in a file.</source>
        <translation>Das Token wird im Schlüsselbund des Betriebssystems aufbewahrt, nie in einer Datei.</translation>
    </message>
    <message>
        <source>Problems</source>
        <translation>Probleme</translation>
    </message>
    <message>
        <source>Settings — Cowork</source>
        <translation>Einstellungen — Cowork</translation>
    </message>
    <message>
        <source>{problems} Saving replaces it; the old file is kept beside it.</source>
        <translation>{problems} Beim Speichern wird sie ersetzt; die alte Datei bleibt daneben erhalten.</translation>
    </message>
    <message>
        <source>Custom</source>
        <translation>Benutzerdefiniert</translation>
    </message>
    <message>
        <source>Set in the environment, and used instead of these settings: {names}.</source>
        <translation>In der Umgebung gesetzt und anstelle dieser Einstellungen verwendet: {names}.</translation>
    </message>
    <message>
        <source>LLM gateway</source>
        <translation>LLM-Gateway</translation>
    </message>
    <message>
        <source>&amp;Preset:</source>
        <translation>&amp;Vorlage:</translation>
    </message>
    <message>
        <source>Empty: the local backend on this computer</source>
        <translation>Leer: das lokale Backend auf diesem Computer</translation>
    </message>
    <message>
        <source>Backend token</source>
        <translation>Backend-Token</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <source>Backend &amp;URL:</source>
        <translation>Backend-&amp;URL:</translation>
    </message>
    <message>
        <source>Backend t&amp;oken:</source>
        <translation>Backend-T&amp;oken:</translation>
    </message>
    <message>
        <source>{count} (the default)</source>
        <translation>{count} (Standard)</translation>
    </message>
    <message>
        <source>Tasks</source>
        <translation>Aufgaben</translation>
    </message>
    <message>
        <source>&amp;Approvals:</source>
        <translation>&amp;Genehmigungen:</translation>
    </message>
    <message>
        <source>Max &amp;steps per task:</source>
        <translation>Max. &amp;Schritte pro Aufgabe:</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <source>T&amp;heme:</source>
        <translation>&amp;Farbschema:</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>Systemsprache</translation>
    </message>
    <message>
        <source>&amp;Language:</source>
        <translation>S&amp;prache:</translation>
    </message>
    <message>
        <source>Cowork shows the chosen language when it starts again.</source>
        <translation>Cowork zeigt die gewählte Sprache beim nächsten Start an.</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>Einstellungsseiten</translation>
    </message>
    <message>
        <source>&amp;General</source>
        <translation>&amp;Allgemein</translation>
    </message>
    <message>
        <source>&amp;MCP servers</source>
        <translation>&amp;MCP-Server</translation>
    </message>
    <message>
        <source>&amp;Prices</source>
        <translation>P&amp;reise</translation>
    </message>
    <message>
        <source>Not needed for the local backend</source>
        <translation>Für das lokale Backend nicht erforderlich</translation>
    </message>
    <message>
        <source>The token your administrator gave you</source>
        <translation>Das Token, das Sie von Ihrem Administrator erhalten haben</translation>
    </message>
    <message>
        <source>Welcome to Cowork</source>
        <translation>Willkommen bei Cowork</translation>
    </message>
    <message>
        <source>Choose the model Cowork works with</source>
        <translation>Wählen Sie das Modell, mit dem Cowork arbeitet</translation>
    </message>
    <message>
        <source>You can change this, and more, in Settings at any time.</source>
        <translation>Dies und mehr können Sie jederzeit in den Einstellungen ändern.</translation>
    </message>
    <message>
        <source>&amp;Start</source>
        <translation>&amp;Starten</translation>
    </message>
    <message>
        <source>&amp;Not now</source>
        <translation>&amp;Nicht jetzt</translation>
    </message>
    <message>
        <source>Connected: {endpoint} answered, and the model {model} works.</source>
        <translation>Verbunden: {endpoint} hat geantwortet, und das Modell {model} funktioniert.</translation>
    </message>
    <message>
        <source>Cannot reach the gateway: {reason}.</source>
        <translation>Das Gateway ist nicht erreichbar: {reason}.</translation>
    </message>
    <message>
        <source>The gateway is reachable but did not accept the token (HTTP {status}). Check the token. The gateway said: {message}</source>
        <translation>Das Gateway ist erreichbar, hat das Token aber nicht akzeptiert (HTTP {status}). Prüfen Sie das Token. Das Gateway meldete: {message}</translation>
    </message>
    <message>
        <source>The gateway is reachable but does not know the model {model} (HTTP {status}). Check the model name and the endpoint. The gateway said: {message}</source>
        <translation>Das Gateway ist erreichbar, kennt das Modell {model} aber nicht (HTTP {status}). Prüfen Sie den Modellnamen und den Endpunkt. Das Gateway meldete: {message}</translation>
    </message>
    <message>
        <source>The gateway answered with an error (HTTP {status}): {message}</source>
        <translation>Das Gateway hat mit einem Fehler geantwortet (HTTP {status}): {message}</translation>
    </message>
    <message>
        <source>Always allowed in projects</source>
        <translation>In Projekten immer erlaubt</translation>
    </message>
    <message>
        <source>Saved with &quot;Always allow in this project&quot; on an approval. A rule only answers what your approval mode would ask; what the policy itself asks about is always asked.</source>
        <translation>Gespeichert mit „In diesem Projekt immer erlauben“ bei einer Genehmigung. Eine Regel beantwortet nur, was Ihr Genehmigungsmodus fragen würde; wonach die Richtlinie selbst fragt, wird immer gefragt.</translation>
    </message>
    <message>
        <source>Saved permission rules</source>
        <translation>Gespeicherte Berechtigungsregeln</translation>
    </message>
    <message>
        <source>No saved rules.</source>
        <translation>Keine gespeicherten Regeln.</translation>
    </message>
    <message>
        <source>&amp;Remove</source>
        <translation>E&amp;ntfernen</translation>
    </message>
    <message>
        <source>Composer</source>
        <translation>Eingabefeld</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter starts a new line</source>
        <translation>Eingabe sendet, Umschalt+Eingabe beginnt eine neue Zeile</translation>
    </message>
    <message>
        <source>{keys} sends, Enter starts a new line</source>
        <translation>{keys} sendet, Eingabe beginnt eine neue Zeile</translation>
    </message>
    <message>
        <source>Key that sends a message</source>
        <translation>Taste, die eine Nachricht sendet</translation>
    </message>
    <message>
        <source>Send &amp;with:</source>
        <translation>Senden m&amp;it:</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>today %H:%M</source>
        <translation>heute %H:%M</translation>
    </message>
    <message>
        <source> · {count} messages</source>
        <translation> · {count} Nachrichten</translation>
    </message>
    <message>
        <source>General chats</source>
        <translation>Allgemeine Chats</translation>
    </message>
    <message>
        <source>Conversations without a project folder</source>
        <translation>Unterhaltungen ohne Projektordner</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>Neue Unterhaltung</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>Unterhaltungen</translation>
    </message>
    <message>
        <source>Search conversations (Ctrl+Shift+F)</source>
        <translation>Unterhaltungen durchsuchen (Strg+Umschalt+F)</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <source>&amp;Rename</source>
        <translation>&amp;Umbenennen</translation>
    </message>
    <message>
        <source>Export as &amp;Markdown…</source>
        <translation>Als &amp;Markdown exportieren…</translation>
    </message>
    <message>
        <source>Export as &amp;JSON…</source>
        <translation>Als &amp;JSON exportieren…</translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation>&amp;Löschen…</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Wird gestartet…</translation>
    </message>
    <message>
        <source>No conversation matches your search.</source>
        <translation>Keine Unterhaltung passt zu Ihrer Suche.</translation>
    </message>
    <message>
        <source>No conversations yet. Start one with New conversation (Ctrl+N).</source>
        <translation>Noch keine Unterhaltungen. Beginnen Sie eine mit „Neue Unterhaltung“ (Strg+N).</translation>
    </message>
    <message>
        <source>Conversation actions</source>
        <translation>Aktionen für die Unterhaltung</translation>
    </message>
</context>
<context>
    <name>Startup</name>
    <message>
        <source>Cowork is already running: its window now shows {what}.</source>
        <translation>Cowork läuft bereits: Sein Fenster zeigt jetzt {what}.</translation>
    </message>
    <message>
        <source>itself</source>
        <translation>sich selbst</translation>
    </message>
    <message>
        <source>{folder} is not a folder: no conversation was opened for it.</source>
        <translation>{folder} ist kein Ordner: Dafür wurde keine Unterhaltung geöffnet.</translation>
    </message>
    <message>
        <source>The backend at {url} cannot be reached ({problem})</source>
        <translation>Das Backend unter {url} ist nicht erreichbar ({problem})</translation>
    </message>
    <message>
        <source>Another Cowork client has been starting the local backend for {seconds} s (lock: {lock})</source>
        <translation>Ein anderer Cowork-Client startet das lokale Backend seit {seconds} s (Sperre: {lock})</translation>
    </message>
    <message>
        <source>The local backend did not start: {problem} (log: {log})</source>
        <translation>Das lokale Backend ist nicht gestartet: {problem} (Protokoll: {log})</translation>
    </message>
    <message>
        <source>The offline demo model did not start</source>
        <translation>Das Offline-Demomodell ist nicht gestartet</translation>
    </message>
    <message>
        <source>The agent runtime did not start ({reason}).</source>
        <translation>Die Agent-Laufzeit ist nicht gestartet ({reason}).</translation>
    </message>
    <message>
        <source>The agent runtime did not connect within {seconds} s.</source>
        <translation>Die Agent-Laufzeit hat sich nicht innerhalb von {seconds} s verbunden.</translation>
    </message>
    <message>
        <source>The backend {url} is set in Settings but no token is saved for it: add the token in Settings, or clear the backend URL to use the local backend.</source>
        <translation>Das Backend {url} ist in den Einstellungen eingetragen, aber dafür ist kein Token gespeichert: Fügen Sie das Token in den Einstellungen hinzu oder leeren Sie die Backend-URL, um das lokale Backend zu verwenden.</translation>
    </message>
</context>
<context>
    <name>Status</name>
    <message>
        <source>{used} of {limit} tokens</source>
        <translation>{used} von {limit} Tokens</translation>
    </message>
    <message>
        <source>{used} tokens</source>
        <translation>{used} Tokens</translation>
    </message>
    <message>
        <source>Step {n} of {total}</source>
        <translation>Schritt {n} von {total}</translation>
    </message>
    <message>
        <source> — near the limit</source>
        <translation> — nahe am Limit</translation>
    </message>
    <message>
        <source>{share} of the session&apos;s token budget</source>
        <translation>{share} des Token-Budgets der Sitzung</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>Dismiss the message</source>
        <translation>Die Meldung schließen</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Wird gestartet…</translation>
    </message>
    <message>
        <source>Session paused</source>
        <translation>Sitzung pausiert</translation>
    </message>
    <message>
        <source>Session ended</source>
        <translation>Sitzung beendet</translation>
    </message>
    <message>
        <source>Session ended with an error</source>
        <translation>Sitzung mit einem Fehler beendet</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>Arbeitet…</translation>
    </message>
    <message>
        <source>Waiting for the model…</source>
        <translation>Wartet auf das Modell…</translation>
    </message>
    <message>
        <source>Reading the model&apos;s answer…</source>
        <translation>Liest die Antwort des Modells…</translation>
    </message>
    <message>
        <source>Checking the policy…</source>
        <translation>Prüft die Richtlinie…</translation>
    </message>
    <message>
        <source>Waiting for your approval</source>
        <translation>Wartet auf Ihre Genehmigung</translation>
    </message>
    <message>
        <source>Running tools…</source>
        <translation>Führt Werkzeuge aus…</translation>
    </message>
    <message>
        <source>Done — ready for your next message</source>
        <translation>Fertig — bereit für Ihre nächste Nachricht</translation>
    </message>
    <message>
        <source>The task failed</source>
        <translation>Die Aufgabe ist fehlgeschlagen</translation>
    </message>
    <message>
        <source>Cancelled — ready for your next message</source>
        <translation>Abgebrochen — bereit für Ihre nächste Nachricht</translation>
    </message>
    <message>
        <source>Ready for your message</source>
        <translation>Bereit für Ihre Nachricht</translation>
    </message>
    <message>
        <source>{n} of {total} steps used</source>
        <translation>{n} von {total} Schritten verbraucht</translation>
    </message>
</context>
<context>
    <name>Updates</name>
    <message>
        <source>The backend does not support this version of Cowork ({version}; it accepts {supported})</source>
        <translation>Das Backend unterstützt diese Version von Cowork nicht ({version}; es akzeptiert {supported})</translation>
    </message>
    <message>
        <source>The backend does not support agent runtime {version}; it accepts runtime versions {supported}</source>
        <translation>Das Backend unterstützt die Agent-Laufzeit {version} nicht; es akzeptiert die Laufzeitversionen {supported}</translation>
    </message>
    <message>
        <source>{refusal}. Install a newer Cowork to start sessions.</source>
        <translation>{refusal}. Installieren Sie eine neuere Cowork-Version, um Sitzungen zu starten.</translation>
    </message>
    <message>
        <source>{refusal}. Download a compatible runtime, and the session starts again with it.</source>
        <translation>{refusal}. Laden Sie eine kompatible Laufzeit herunter, dann startet die Sitzung damit neu.</translation>
    </message>
    <message>
        <source>Installing runtime {version}…</source>
        <translation>Laufzeit {version} wird installiert…</translation>
    </message>
    <message>
        <source>Checking that runtime {version} starts…</source>
        <translation>Es wird geprüft, ob Laufzeit {version} startet…</translation>
    </message>
    <message>
        <source>Activating runtime {version}…</source>
        <translation>Laufzeit {version} wird aktiviert…</translation>
    </message>
    <message>
        <source>Checking for runtime updates…</source>
        <translation>Es wird nach Laufzeit-Updates gesucht…</translation>
    </message>
    <message>
        <source>update</source>
        <translation>Update</translation>
    </message>
    <message>
        <source>Downloading runtime {version}…</source>
        <translation>Laufzeit {version} wird heruntergeladen…</translation>
    </message>
    <message>
        <source>Downloading runtime {version} — {percent} %</source>
        <translation>Laufzeit {version} wird heruntergeladen — {percent} %</translation>
    </message>
    <message>
        <source>{done} of {total}, in the background</source>
        <translation>{done} von {total}, im Hintergrund</translation>
    </message>
    <message>
        <source>Runtime {version} installed; new conversations use it</source>
        <translation>Laufzeit {version} installiert; neue Unterhaltungen verwenden sie</translation>
    </message>
    <message>
        <source>{message} Conversations already open keep their runtime until they are closed.</source>
        <translation>{message} Bereits geöffnete Unterhaltungen behalten ihre Laufzeit, bis sie geschlossen werden.</translation>
    </message>
    <message>
        <source>Runtime {version} was withdrawn by its publisher; new conversations use another</source>
        <translation>Laufzeit {version} wurde vom Herausgeber zurückgezogen; neue Unterhaltungen verwenden eine andere</translation>
    </message>
    <message>
        <source>The agent runtime is up to date</source>
        <translation>Die Agent-Laufzeit ist aktuell</translation>
    </message>
    <message>
        <source>No runtime update for this installation yet</source>
        <translation>Noch kein Laufzeit-Update für diese Installation</translation>
    </message>
    <message>
        <source>Runtime update refused: {message}</source>
        <translation>Laufzeit-Update abgelehnt: {message}</translation>
    </message>
    <message>
        <source>Runtime update postponed: {message}</source>
        <translation>Laufzeit-Update verschoben: {message}</translation>
    </message>
    <message>
        <source>{message} Nothing to do: the runtime in use stays, and Cowork checks again later.</source>
        <translation>{message} Sie müssen nichts tun: Die verwendete Laufzeit bleibt, und Cowork prüft später erneut.</translation>
    </message>
    <message>
        <source>Runtime {failed} kept crashing; new conversations use runtime {now}</source>
        <translation>Laufzeit {failed} ist wiederholt abgestürzt; neue Unterhaltungen verwenden Laufzeit {now}</translation>
    </message>
    <message>
        <source>Runtime {failed} kept crashing; new conversations use the previous runtime</source>
        <translation>Laufzeit {failed} ist wiederholt abgestürzt; neue Unterhaltungen verwenden die vorherige Laufzeit</translation>
    </message>
    <message>
        <source>Runtime {version} {reason}; it will not be used again.</source>
        <translation>Laufzeit {version}: {reason}; sie wird nicht mehr verwendet.</translation>
    </message>
</context>
<context>
    <name>Welcome</name>
    <message>
        <source>Start here</source>
        <translation>Hier beginnen</translation>
    </message>
    <message>
        <source>Choose a &amp;Project Folder…</source>
        <translation>&amp;Projektordner wählen…</translation>
    </message>
    <message>
        <source>Choose a project folder</source>
        <translation>Einen Projektordner wählen</translation>
    </message>
    <message>
        <source>Set Up a &amp;Model…</source>
        <translation>&amp;Modell einrichten…</translation>
    </message>
    <message>
        <source>Set up a model in Settings</source>
        <translation>Ein Modell in den Einstellungen einrichten</translation>
    </message>
    <message>
        <source>1. Choose a project folder</source>
        <translation>1. Projektordner wählen</translation>
    </message>
    <message>
        <source>Cowork reads, edits and runs commands only inside the folder you choose. For a chat without files, use File → New General Chat.</source>
        <translation>Cowork liest, bearbeitet und führt Befehle nur in dem Ordner aus, den Sie wählen. Für einen Chat ohne Dateien verwenden Sie Datei → Neuer allgemeiner Chat.</translation>
    </message>
    <message>
        <source>2. Set up a model</source>
        <translation>2. Modell einrichten</translation>
    </message>
    <message>
        <source>Pick the LLM Cowork works with in Settings: a provider and its API key, a local model, or the offline demo model to try things out.</source>
        <translation>Wählen Sie in den Einstellungen das LLM, mit dem Cowork arbeitet: einen Anbieter mit seinem API-Schlüssel, ein lokales Modell oder zum Ausprobieren das Offline-Demomodell.</translation>
    </message>
    <message>
        <source>3. Ask</source>
        <translation>3. Fragen</translation>
    </message>
    <message>
        <source>Describe the task below and press Ctrl+Enter. Cowork asks before risky actions.</source>
        <translation>Beschreiben Sie unten die Aufgabe und drücken Sie Strg+Eingabe. Cowork fragt vor riskanten Aktionen.</translation>
    </message>
    <message>
        <source>Set up: {model}.</source>
        <translation>Eingerichtet: {model}.</translation>
    </message>
    <message>
        <source>Change the &amp;Model…</source>
        <translation>&amp;Modell ändern…</translation>
    </message>
    <message>
        <source>the offline demo model (not a real LLM)</source>
        <translation>das Offline-Demomodell (kein echtes LLM)</translation>
    </message>
    <message>
        <source>{model} at {endpoint}</source>
        <translation>{model} unter {endpoint}</translation>
    </message>
</context>
</TS>
