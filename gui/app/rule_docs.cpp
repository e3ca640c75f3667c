#include "app/rule_docs.h"

#include "report/rule_docs.h"

#include <QFile>
#include <QFileInfo>

namespace tuneup::gui {

namespace {

QString readText(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}

} // namespace

QString builtinRuleDoc(const QString& ruleId) {
    const std::string_view doc = analysis::builtinRuleDoc(ruleId.toStdString());
    return QString::fromUtf8(doc.data(), qsizetype(doc.size()));
}

QString ruleDoc(const analysis::Finding& finding) {
    if (!finding.docPath.empty()) {
        // A user rule: its .sql file opens with the comment that documents it; show it as code.
        const QString path = QString::fromStdString(finding.docPath);
        QString text = readText(path);
        if (text.isEmpty()) return {};
        if (path.endsWith(QStringLiteral(".md"))) return text;
        return QStringLiteral("# %1\n\nA user rule, from `%2`:\n\n```sql\n%3\n```\n")
            .arg(QString::fromStdString(finding.ruleId), QFileInfo(path).fileName(), text);
    }
    return builtinRuleDoc(QString::fromStdString(finding.ruleId));
}

} // namespace tuneup::gui
